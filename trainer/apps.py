from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TrainerConfig(AppConfig):
    name = "trainer"
    verbose_name = "Trainer"

    def ready(self):
        from grading.signals import attempt_scored
        from trainer.roles import ensure_roles

        post_migrate.connect(ensure_roles, dispatch_uid="trainer.ensure_roles")
        attempt_scored.connect(_record_progress, dispatch_uid="trainer.record_progress")


def _record_progress(sender, attempt, **kwargs):
    from trainer.services import progress_record_attempt

    progress_record_attempt(attempt)
