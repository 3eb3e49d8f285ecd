"""Signals the grading shell sends, so other apps can react without grading importing them."""

from django.dispatch import Signal

# Sent once when an attempt's score is final or changes (graded; self-assessed);
# kwargs: attempt.
attempt_scored = Signal()
