"""Item statistics: what each part's numbers count, and when a key is suspect."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

import grading
from conftest import DECODE_FLOOR_YAML
from grading import services
from grading.models import Attempt
from questions.services import question_save_text
from questions.variants import draw_variant
from trainer import item_stats
from trainer.interviews import services as interview_services
from trainer.interviews.tests.conftest import make_interview, start

SEED = 3


def _reference(version, seed=SEED) -> str:
    question = version.as_question()
    kind = grading.get_kind("numeric")
    return kind.reference_answer(kind.load_spec(question.part("floor").raw), draw_variant(question, seed).context)


def answered(user, version, answer, *, part_id="floor", seed=SEED, hints_used=0, seconds=None,
             after_solution=False) -> Attempt:
    """A graded practice answer, through the real submit and grading."""
    attempt = services.attempt_submit(
        user=user, version=version, part_id=part_id, seed=seed, answer=answer, hints_used=hints_used,
        time_taken=None if seconds is None else timedelta(seconds=seconds),
    ).attempt
    assert attempt is not None, f"{answer!r} was not readable"
    if after_solution:
        Attempt.objects.filter(id=attempt.id).update(after_solution=True)
    attempt = services.attempt_grade(attempt.id)
    assert attempt.status == Attempt.Status.GRADED, attempt.failure_reason
    return attempt


def crowd(django_user_model, count: int, prefix="crowd"):
    return [django_user_model.objects.create_user(username=f"{prefix}{index}") for index in range(count)]


def _part(parts, part_id="floor", slug="test-decode-floor") -> item_stats.PartStats:
    [found] = [stats for stats in parts if stats.question_slug == slug and stats.part_id == part_id]
    return found


def _bits_instead_of_bytes(version) -> str:
    """The part's listed mistake (floor * 8), typed as a candidate would."""
    value, unit = _reference(version).split()
    return f"{float(value) * 8:.6g} {unit}"


def test_counts_first_tries_median_time_hints_and_wrong_answers(candidate, other_candidate, decode_question):
    right = _reference(decode_question)
    first = answered(candidate, decode_question, _bits_instead_of_bytes(decode_question), seconds=60)
    answered(candidate, decode_question, right, seconds=120)
    answered(other_candidate, decode_question, right, hints_used=1, seconds=30)

    floor = _part(item_stats.item_stats())
    assert (floor.attempts, floor.candidates, floor.first_tries, floor.interview_attempts) == (3, 2, 2, 0)
    assert floor.first_try_correct_share == 0.5  # the candidate's later right answer is no first try
    assert floor.median_time == timedelta(seconds=45)  # of 60 s and 30 s, the first answers
    assert floor.hint_share == pytest.approx(1 / 3)
    [wrong] = floor.top_wrong
    assert (wrong.text, wrong.count, wrong.candidates) == (first.verdict["interpreted"], 1, 1)
    assert wrong.mistake == "mistakes[0]" and wrong.listed and "bits" in wrong.feedback
    assert not floor.suspect

    why = _part(item_stats.item_stats(), part_id="why")  # a part nobody answered is still listed
    assert (why.attempts, why.first_try_correct_share, why.median_time, why.top_wrong) == (0, None, None, [])


def test_a_candidate_who_opened_the_solution_before_answering_has_no_first_try(candidate, decode_question):
    answered(candidate, decode_question, "1234 ms", after_solution=True)
    floor = _part(item_stats.item_stats())
    assert floor.attempts == 1
    assert floor.first_tries == 0 and floor.first_try_correct_share is None
    assert floor.top_wrong == []  # typed with the solution open: no sign of a broken key


def test_interview_answers_are_counted_but_make_no_statistic(interviewer, candidate, decode_question):
    interview = start(make_interview(interviewer, decode_question), candidate)
    result = interview_services.answer_submit(
        interview=interview, user=candidate, question=interview.questions.get(), part_id="floor", answer="1234 ms"
    )
    services.attempt_grade(result.attempt.id)
    floor = _part(item_stats.item_stats())
    assert floor.interview_attempts == 1
    assert (floor.attempts, floor.candidates, floor.first_tries, floor.top_wrong) == (0, 0, 0, [])


def test_answers_to_older_versions_count_only_when_asked(candidate, decode_question):
    answered(candidate, decode_question, "1234 ms")
    changed = question_save_text(DECODE_FLOOR_YAML.replace("(test question)", "(test question, fixed)"),
                                 origin="file")
    assert changed.created_version
    assert _part(item_stats.item_stats()).attempts == 0
    assert _part(item_stats.item_stats(all_versions=True)).attempts == 1


@pytest.mark.parametrize("how_many, suspect", [(5, True), (4, False)])
def test_careful_candidates_sharing_an_unlisted_wrong_answer_make_a_suspect_key(
    django_user_model, decode_question, how_many, suspect
):
    for user in crowd(django_user_model, how_many):
        answered(user, decode_question, "2 ms")
    floor = _part(item_stats.item_stats())
    assert floor.suspect is suspect
    if suspect:
        assert "5 of 5 careful candidates answered '2 ms'" in floor.suspect_reasons[0]


def test_a_shared_wrong_answer_that_is_a_listed_mistake_is_no_suspect(django_user_model, decode_question):
    for user in crowd(django_user_model, 6):
        answered(user, decode_question, _bits_instead_of_bytes(decode_question))
    assert not _part(item_stats.item_stats()).suspect


def test_a_shared_wrong_answer_after_hints_is_no_suspect(django_user_model, decode_question):
    for user in crowd(django_user_model, 6):
        answered(user, decode_question, "2 ms", hints_used=1)
    assert not _part(item_stats.item_stats()).suspect


def test_a_shared_wrong_answer_of_a_small_minority_is_no_suspect(django_user_model, decode_question):
    right = _reference(decode_question)
    users = crowd(django_user_model, 25)
    for user in users[:5]:
        answered(user, decode_question, "2 ms")
    for user in users[5:]:
        answered(user, decode_question, right)  # 5 of 25 is 20%, under the 25% share
    assert not _part(item_stats.item_stats()).suspect


@pytest.mark.parametrize("how_many, suspect", [(10, True), (9, False)])
def test_a_part_far_harder_than_its_difficulty_is_suspect(django_user_model, decode_question, how_many, suspect):
    for index, user in enumerate(crowd(django_user_model, how_many)):
        answered(user, decode_question, f"{101 + index * 7} ms")  # all different: no shared answer
    floor = _part(item_stats.item_stats())
    assert floor.first_try_correct_share == 0.0
    assert floor.suspect is suspect
    if suspect:
        assert floor.suspect_reasons == [
            "only 0% of 10 careful first tries are correct; the floor for difficulty 1 is 30%"]


def test_first_tries_after_hints_do_not_count_towards_the_difficulty_rule(django_user_model, decode_question):
    for index, user in enumerate(crowd(django_user_model, 10)):
        answered(user, decode_question, f"{101 + index * 7} ms", hints_used=1 if index == 0 else 0)
    assert not _part(item_stats.item_stats()).suspect  # 9 careful first tries, under the 10 needed


def test_suspect_parts_come_first_and_topics_filter(django_user_model, decode_question, kv_formula_question):
    for user in crowd(django_user_model, 5):
        answered(user, decode_question, "2 ms")
    parts = item_stats.item_stats(sort="attempts")
    assert parts[0].question_slug == "test-decode-floor" and parts[0].part_id == "floor" and parts[0].suspect
    assert not any(stats.suspect for stats in parts[1:])
    kv_topic = kv_formula_question.question.topic
    assert kv_topic != decode_question.question.topic
    assert {stats.question_slug for stats in item_stats.item_stats(topic=kv_topic)} == {
        kv_formula_question.question.slug}


def test_a_fixed_number_of_queries_however_many_answers(django_user_model, candidate, decode_question,
                                                         kv_formula_question):
    answered(candidate, decode_question, "1234 ms")
    with CaptureQueriesContext(connection) as few:
        item_stats.item_stats()
    for index, user in enumerate(crowd(django_user_model, 6)):
        answered(user, decode_question, f"{index + 2} ms", seconds=index)
        answered(user, kv_formula_question, "2*L*h*d*b", part_id="kv")
    with CaptureQueriesContext(connection) as many:
        stats = item_stats.item_stats()
    assert len(many.captured_queries) == len(few.captured_queries) == 2
    assert sum(part.attempts for part in stats) == 13


def test_programs_are_grouped_by_diagnosis_and_never_make_a_shared_answer(django_user_model, decode_question):
    # Stored directly (running programs needs the sandbox): six different wrong programs
    # for a code part the current version no longer has.
    for index, user in enumerate(crowd(django_user_model, 6)):
        Attempt.objects.create(
            user=user, question_version=decode_question, part_id="old-code", part_kind="code", variant_seed=SEED,
            answer=f"def solve():\n    return {index}\n", status=Attempt.Status.GRADED, correct=False, score=0.0,
            verdict={"valid": True, "correct": False, "score": 0.0, "interpreted": "", "mistake": "wrong_answer"},
        )
    code = _part(item_stats.item_stats(), part_id="old-code")
    assert code.part_kind == "code" and code.attempts == 6
    assert [(wrong.text, wrong.count, wrong.mistake) for wrong in code.top_wrong] == [("", 6, "wrong_answer")]
    assert not code.suspect
