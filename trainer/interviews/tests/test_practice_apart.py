"""An interview answer leaves the candidate's practice progress, mastery and reviews alone."""

from grading.services import attempt_grade
from trainer import services as trainer_services
from trainer.interviews import selectors, services
from trainer.models import MasterySnapshot, Progress


def _reference(question):
    import grading
    from questions.variants import draw_variant

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


def test_the_candidates_export_marks_each_rows_context(client, login_as, started_interview, candidate,
                                                       decode_question):
    import csv
    import io

    from django.urls import reverse

    from grading.services import attempt_submit

    question = started_interview.questions.select_related("question_version").get(position=1)
    services.answer_submit(interview=started_interview, user=candidate, question=question, part_id="floor",
                           answer="1000 ms")
    attempt_submit(user=candidate, version=decode_question, part_id="floor", seed=5, answer="2000 ms")
    login_as(candidate)
    body = client.get(reverse("export-attempts", args=["csv"])).content.decode()
    rows = {row["answer"]: row for row in csv.DictReader(io.StringIO(body))}
    assert rows["1000 ms"]["context"] == "interview" and rows["1000 ms"]["interview"] == str(started_interview.id)
    assert rows["2000 ms"]["context"] == "practice" and rows["2000 ms"]["interview"] == ""
