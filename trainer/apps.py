from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TrainerConfig(AppConfig):
    name = "trainer"
    verbose_name = "Trainer"

    def ready(self):
        from trainer.roles import ensure_roles

        post_migrate.connect(ensure_roles, dispatch_uid="trainer.ensure_roles")
