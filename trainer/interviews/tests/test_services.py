"""Interview services: setting up, joining, the clock, and every recorded write."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from grading.models import Attempt
from grading.services import attempt_grade, attempt_submit
from trainer.interviews import selectors, services
from trainer.interviews.models import Interview, InterviewEvent
from trainer.interviews.tests.conftest import join, make_interview, start

Kind = InterviewEvent.Kind


def kinds(interview):
    return list(InterviewEvent.objects.filter(interview=interview).values_list("kind", flat=True))


def first_question(interview):
    return interview.questions.select_related("question_version").get(position=1)


def expire(interview):
    services.move_deadline(interview=interview, deadline=timezone.now() - timedelta(seconds=1))


def test_create_pins_each_questions_version_and_a_seed(interviewer, decode_question, code_question):
    interview = make_interview(interviewer, decode_question, code_question)
    pinned = list(interview.questions.order_by("position").values_list("position", "question_version", "variant_seed"))
    assert [(position, version) for position, version, _ in pinned] == [(1, decode_question.id), (2, code_question.id)]
    assert all(0 <= seed < services.MAX_SEED for *_, seed in pinned)
    assert kinds(interview) == [Kind.CREATED]
    assert interview.status == Interview.Status.INVITED and interview.deadline is None


def test_create_needs_a_question(interviewer):
    with pytest.raises(services.InterviewRefused):
        services.interview_create(created_by=interviewer, title="x", questions=[], time_limit=timedelta(minutes=5),
                                  hints_allowed=True, solutions_allowed=False)


def test_invitation_works_once(interview, candidate, other_candidate):
    join(interview, candidate)
    with pytest.raises(services.InterviewRefused):
        join(interview, other_candidate)
    interview.refresh_from_db()
    assert interview.candidate == candidate
    assert kinds(interview) == [Kind.CREATED, Kind.JOINED]


def test_guest_identity_has_no_password_and_no_role(interview):
    joined = services.invite_accept(token=interview.invite_token, guest_name="Ada")
    guest = joined.candidate
    assert joined.candidate_is_guest and guest.first_name == "Ada"
    assert not guest.has_usable_password()
    assert not guest.groups.exists() and not guest.has_perm("grading.submit_attempt")


def test_guest_needs_a_name(interview, django_user_model):
    users_before = django_user_model.objects.count()
    with pytest.raises(services.InterviewRefused):
        services.invite_accept(token=interview.invite_token, guest_name="  ")
    assert django_user_model.objects.count() == users_before


def test_panel_cannot_use_its_own_invitation(interview, interviewer):
    with pytest.raises(services.InterviewRefused):
        join(interview, interviewer)


def test_start_sets_the_deadline_once(interview, candidate):
    started = start(interview, candidate)
    assert started.status == Interview.Status.ACTIVE
    assert started.deadline == started.started_at + timedelta(minutes=30)
    again = services.interview_start(interview=started, user=candidate)
    assert again.deadline == started.deadline
    assert kinds(interview).count(Kind.STARTED) == 1


def test_only_the_candidate_starts(interview, candidate, other_candidate):
    join(interview, candidate)
    with pytest.raises(services.InterviewRefused):
        services.interview_start(interview=interview, user=other_candidate)


def test_answer_before_start_is_refused(interview, candidate):
    join(interview, candidate)
    with pytest.raises(services.InterviewClosed):
        services.answer_submit(interview=interview, user=candidate, question=first_question(interview),
                               part_id="floor", answer="5 ms")


def test_answer_after_the_deadline_is_refused_and_closes_the_interview(started_interview, candidate):
    expire(started_interview)
    with pytest.raises(services.InterviewClosed):
        services.answer_submit(interview=started_interview, user=candidate, question=first_question(started_interview),
                               part_id="floor", answer="5 ms")
    started_interview.refresh_from_db()
    assert started_interview.status == Interview.Status.CLOSED  # the close survived the refused write
    assert Attempt.objects.count() == 0
    assert kinds(started_interview)[-1] == Kind.CLOSED


def test_another_user_cannot_answer(started_interview, other_candidate):
    with pytest.raises(services.InterviewRefused):
        services.answer_submit(interview=started_interview, user=other_candidate,
                               question=first_question(started_interview), part_id="floor", answer="5 ms")


def test_unreadable_answer_costs_nothing_but_is_recorded(started_interview, candidate):
    result = services.answer_submit(interview=started_interview, user=candidate,
                                    question=first_question(started_interview), part_id="floor", answer="12 GB")
    assert result.attempt is None
    assert Attempt.objects.count() == 0
    event = InterviewEvent.objects.get(kind=Kind.ANSWER_INVALID)
    assert event.data["answer"] == "12 GB" and event.data["feedback"]


def test_answer_is_recorded_and_its_verdict_arrives_when_graded(started_interview, candidate):
    question = first_question(started_interview)
    services.question_open(interview=started_interview, user=candidate, question=question)
    result = services.answer_submit(interview=started_interview, user=candidate, question=question,
                                    part_id="floor", answer="1000 ms")
    attempt = result.attempt
    assert attempt.variant_seed == question.variant_seed and attempt.question_version == question.question_version
    assert attempt.time_taken is not None
    answer = InterviewEvent.objects.get(kind=Kind.ANSWER)
    assert answer.data == {"answer": "1000 ms", "attempt_id": attempt.id, "kind": "numeric"}
    attempt_grade(attempt.id)
    verdict = InterviewEvent.objects.get(kind=Kind.VERDICT)
    assert verdict.data["attempt_id"] == attempt.id and verdict.data["correct"] is False
    assert verdict.sequence > answer.sequence


def test_practice_attempts_are_not_recorded_in_interviews(started_interview, candidate, decode_question):
    result = attempt_submit(user=candidate, version=decode_question, part_id="floor", seed=1, answer="5 ms")
    attempt_grade(result.attempt.id)
    assert not InterviewEvent.objects.filter(kind=Kind.VERDICT).exists()


def test_hints_are_recorded_and_count_against_later_answers(started_interview, candidate):
    question = first_question(started_interview)
    assert services.hint_take(interview=started_interview, user=candidate, question=question) == 1
    with pytest.raises(services.InterviewRefused):  # the question has one hint
        services.hint_take(interview=started_interview, user=candidate, question=question)
    result = services.answer_submit(interview=started_interview, user=candidate, question=question,
                                    part_id="floor", answer="1000 ms")
    assert result.attempt.hints_used == 1
    assert InterviewEvent.objects.get(kind=Kind.HINT).data == {"index": 0}


def test_hints_can_be_switched_off(interviewer, decode_question, candidate):
    interview = start(make_interview(interviewer, decode_question, hints=False), candidate)
    with pytest.raises(services.InterviewRefused):
        services.hint_take(interview=interview, user=candidate, question=first_question(interview))


def test_code_snapshots_skip_unchanged_text(interviewer, code_question, candidate):
    interview = start(make_interview(interviewer, code_question), candidate)
    question = first_question(interview)
    write = dict(interview=interview, user=candidate, question=question, part_id="impl")
    assert services.code_snapshot(**write, source="def total(xs):\n    return 0\n")
    assert not services.code_snapshot(**write, source="def total(xs):\n    return 0\n")
    assert services.code_snapshot(**write, source="def total(xs):\n    return sum(xs)\n")
    sources = [e.data["source"] for e in InterviewEvent.objects.filter(kind=Kind.CODE_SNAPSHOT)]
    assert sources == ["def total(xs):\n    return 0\n", "def total(xs):\n    return sum(xs)\n"]
    assert selectors.last_editor_source(question, "impl") == sources[-1]


def test_code_snapshots_are_only_for_code_parts_and_capped(interviewer, code_question, candidate):
    interview = start(make_interview(interviewer, code_question), candidate)
    question = first_question(interview)
    with pytest.raises(services.InterviewRefused):
        services.code_snapshot(interview=interview, user=candidate, question=question, part_id="cost", source="x")
    with pytest.raises(services.InterviewRefused):
        services.code_snapshot(interview=interview, user=candidate, question=question, part_id="impl",
                               source="#" * (services.MAX_SOURCE_CHARS + 1))
    assert not InterviewEvent.objects.filter(kind=Kind.CODE_SNAPSHOT).exists()


def test_code_run_records_the_full_source(interviewer, code_question, candidate):
    interview = start(make_interview(interviewer, code_question), candidate)
    source = "def total(xs):\n    return sum(xs)\n"
    result = services.code_run(interview=interview, user=candidate, question=first_question(interview),
                               part_id="impl", source=source)
    event = InterviewEvent.objects.get(kind=Kind.CODE_RUN)
    # This part has no judge, so grading cannot run it: nothing ran, and the record says why.
    assert event.data == {"source": source, "valid": result.valid, "feedback": result.feedback, "attempt_id": None}
    assert result.attempt is None and result.feedback


def test_code_snapshot_after_the_deadline_is_refused(interviewer, code_question, candidate):
    interview = start(make_interview(interviewer, code_question), candidate)
    expire(interview)
    with pytest.raises(services.InterviewClosed):
        services.code_snapshot(interview=interview, user=candidate, question=first_question(interview),
                               part_id="impl", source="late")


def test_question_open_is_not_recorded_after_the_end(started_interview, candidate):
    expire(started_interview)
    assert not services.question_open(interview=started_interview, user=candidate,
                                      question=first_question(started_interview))
    assert Kind.QUESTION_OPENED not in kinds(started_interview)


def test_sequence_numbers_are_contiguous(started_interview, candidate, interviewer):
    question = first_question(started_interview)
    services.question_open(interview=started_interview, user=candidate, question=question)
    services.note_add(interview=started_interview, author=interviewer, text="Good start")
    services.hint_take(interview=started_interview, user=candidate, question=question)
    sequences = list(InterviewEvent.objects.filter(interview=started_interview).values_list("sequence", flat=True))
    assert sequences == list(range(1, len(sequences) + 1))
    started_interview.refresh_from_db()
    assert started_interview.last_sequence == len(sequences)


def test_notes_are_for_the_panel_only(started_interview, candidate, other_candidate, interviewer):
    for outsider in (candidate, other_candidate):
        with pytest.raises(services.InterviewRefused):
            services.note_add(interview=started_interview, author=outsider, text="hi")
    note = services.note_add(interview=started_interview, author=interviewer, text="  Explains clearly  ")
    assert note.data == {"text": "Explains clearly"} and note.actor == interviewer


def test_added_interviewer_joins_the_panel(interview, interviewer, django_user_model, candidate):
    from trainer.roles import Role
    from trainer.services import user_create

    second = user_create(username="interviewer2", password="x-long-password-2", role=Role.INTERVIEWER)
    assert not selectors.is_on_panel(second, interview)
    services.interviewer_add(interview=interview, added_by=interviewer, username="interviewer2")
    assert selectors.is_on_panel(second, interview)
    with pytest.raises(services.InterviewRefused):  # a candidate is not an interviewer
        services.interviewer_add(interview=interview, added_by=interviewer, username=candidate.username)
    with pytest.raises(services.InterviewRefused):  # only the creator (or an admin) adds
        services.interviewer_add(interview=interview, added_by=second, username="interviewer2")


def test_interviewer_can_end_the_interview(started_interview, interviewer, candidate):
    assert services.interview_end(interview=started_interview, ended_by=interviewer)
    assert not services.interview_end(interview=started_interview, ended_by=interviewer)
    assert started_interview.status == Interview.Status.CLOSED
    assert InterviewEvent.objects.get(kind=Kind.CLOSED).data == {"reason": "ended_by_interviewer"}
    with pytest.raises(services.InterviewClosed):
        services.hint_take(interview=started_interview, user=candidate, question=first_question(started_interview))


def test_close_expired_interviews_command_closes_only_expired_ones(interviewer, decode_question, candidate,
                                                                   other_candidate, capsys):
    expired = start(make_interview(interviewer, decode_question), candidate)
    running = start(make_interview(interviewer, decode_question), other_candidate)
    expire(expired)
    call_command("close_expired_interviews")
    assert "closed 1 expired interview" in capsys.readouterr().out
    expired.refresh_from_db()
    running.refresh_from_db()
    assert expired.status == Interview.Status.CLOSED and expired.closed_at is not None
    assert running.status == Interview.Status.ACTIVE
    call_command("close_expired_interviews")  # safe to run twice
    assert InterviewEvent.objects.filter(interview=expired, kind=Kind.CLOSED).count() == 1


def test_each_interview_draws_its_seeds_secretly_from_the_full_range(monkeypatch, interviewer, decode_question):
    """The seed is the interview's secret: drawn by `secrets` over every seed, not by a
    generator anyone could reseed or predict, so two interviews of one question differ."""
    import random
    import secrets

    ranges, draw = [], secrets.randbelow

    def randbelow(bound):
        ranges.append(bound)
        return draw(bound)

    monkeypatch.setattr(services.secrets, "randbelow", randbelow)
    seeds = []
    for _ in range(3):
        random.seed(1234)  # a predictable `random` state changes nothing
        interview = make_interview(interviewer, decode_question)
        seeds.append(first_question(interview).variant_seed)
    assert ranges == [services.MAX_SEED] * 3 and services.MAX_SEED == 2**31 - 1
    assert len(set(seeds)) == 3


@pytest.mark.parametrize("joined_first", [False, True])
def test_a_closed_interview_admits_no_one_and_makes_no_guest(interview, interviewer, candidate, other_candidate,
                                                             django_user_model, joined_first):
    if joined_first:
        join(interview, candidate)
    services.interview_end(interview=interview, ended_by=interviewer)
    users_before = django_user_model.objects.count()
    with pytest.raises(services.InterviewClosed):
        services.invite_accept(token=interview.invite_token, guest_name="Mallory")
    with pytest.raises(services.InterviewClosed):
        join(interview, other_candidate)
    assert django_user_model.objects.count() == users_before
    interview.refresh_from_db()
    assert interview.candidate == (candidate if joined_first else None)
    assert kinds(interview).count(Kind.JOINED) == (1 if joined_first else 0)
