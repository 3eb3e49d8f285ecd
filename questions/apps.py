from django.apps import AppConfig


class QuestionsConfig(AppConfig):
    """The question bank: files under questions/bank synced into versioned rows."""

    name = "questions"
    label = "questions"
    verbose_name = "Question bank"
