"""An interview answer leaves the candidate's practice progress, mastery and reviews alone."""

from grading.services import attempt_grade
from trainer import services as trainer_services
from trainer.interviews import selectors, services
from trainer.models import MasterySnapshot, Progress


def _reference(question):
    import grading
    from questions.rendering import draw_variant

    kind = grading.get_kind("numeric")
    part = question.question_version.as_question().part("floor")
    return kind.reference_answer(kind.load_spec(part.raw),
                                 draw_variant(question.question_version.as_question(), question.variant_seed).context)


def test_a_correct_interview_answer_does_not_touch_practice(started_interview, candidate):
    question = started_interview.questions.select_related("question_version").get(position=1)
    result = services.answer_submit(interview=started_interview, user=candidate, question=question,
                                    part_id="floor", answer=_reference(question))
    attempt = attempt_grade(result.attempt.id)
    assert attempt.correct is True  # graded, and recorded in the interview
    assert selectors.hints_taken(question) == 0
    assert not Progress.objects.filter(user=candidate).exists()
    assert not MasterySnapshot.objects.filter(user=candidate).exists()
    trainer_services.progress_rebuild(candidate)  # a rebuild leaves it out too
    assert not Progress.objects.filter(user=candidate).exists()
