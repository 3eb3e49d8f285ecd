from django.apps import AppConfig


class InterviewsConfig(AppConfig):
    """Timed interviews with a full transcript and the panel's scorecards."""

    name = "trainer.interviews"
    label = "interviews"
    verbose_name = "Interviews"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from grading.signals import attempt_scored

        attempt_scored.connect(_record_verdict, dispatch_uid="interviews.record_verdict")


def _record_verdict(sender, attempt, **kwargs):
    from trainer.interviews.services import verdict_record

    verdict_record(attempt)
