import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trainer.settings")
application = get_wsgi_application()

from trainer.startup import freeze_startup_heap  # noqa: E402 (needs the settings loaded above)

freeze_startup_heap()
