from django.apps import AppConfig


class GradingConfig(AppConfig):
    """The Django shell around the pure grading library: attempts, their queue, tasks."""

    name = "grading"
    verbose_name = "Grading"
    default_auto_field = "django.db.models.BigAutoField"
