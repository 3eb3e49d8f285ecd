"""Scorecards from evidence: opened pre-filled, judged per part (confirm, override with a
reason, rubric ticks), submitted only when every part is judged, private per author."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.services import attempt_grade
from trainer.interviews import scorecards, services
from trainer.interviews.models import PartJudgement, Scorecard
from trainer.interviews.tests.conftest import make_interview, start
from trainer.roles import Role

Judge = scorecards.JudgementInput


@pytest.fixture
def graded(started_interview, candidate):
    """The decode interview with one graded (wrong) answer to `floor`, then closed."""
    question = started_interview.questions.select_related("question_version").get()
    attempt_grade(services.answer_submit(interview=started_interview, user=candidate, question=question,
                                         part_id="floor", answer="1000 ms").attempt.id)
    services.interview_end(interview=started_interview, ended_by=started_interview.created_by)
    return started_interview


@pytest.fixture
def second_interviewer(graded, interviewer):
    from trainer.services import user_create

    member = user_create(username="interviewer2", password="a-long-test-password-1", role=Role.INTERVIEWER)
    services.interviewer_add(interview=graded, added_by=interviewer, username=member.username)
    return member


def keys(interview):
    question = interview.questions.get()
    return (question.id, "floor"), (question.id, "why")


def test_opening_creates_one_unconfirmed_judgement_per_part_with_the_auto_score(graded, interviewer):
    card = scorecards.scorecard_open(interview=graded, interviewer=interviewer)
    floor, why = card.judgements.order_by("part_id")
    assert (floor.part_id, floor.auto_score, floor.confirmed) == ("floor", 0.0, False)
    assert (why.part_id, why.auto_score, why.rubric_ticked) == ("why", None, [])
    scorecards.scorecard_open(interview=graded, interviewer=interviewer)  # a second opening adds nothing
    assert PartJudgement.objects.count() == 2


def test_an_override_needs_a_reason_and_a_score_from_0_to_1(graded, interviewer):
    card = scorecards.scorecard_open(interview=graded, interviewer=interviewer)
    floor, _ = keys(graded)
    with pytest.raises(services.InterviewRefused, match="say why"):
        scorecards.scorecard_save(scorecard=card, judgements={floor: Judge(override_score=0.5)},
                                  recommendation="", notes="")
    for score in (-0.1, 1.5):
        with pytest.raises(services.InterviewRefused, match="from 0 to 1"):
            scorecards.scorecard_save(scorecard=card, judgements={floor: Judge(override_score=score, reason="x")},
                                      recommendation="", notes="")
    with pytest.raises(services.InterviewRefused, match="unknown rubric"):
        scorecards.scorecard_save(scorecard=card, judgements={floor: Judge(rubric_ticked=("kv",))},
                                  recommendation="", notes="")
    scorecards.scorecard_save(scorecard=card, judgements={floor: Judge(confirmed=True, override_score=0.5,
                                                                       reason="Right method")},
                              recommendation="", notes="")
    judgement = card.judgements.get(part_id="floor")
    assert (judgement.override_score, judgement.confirmed, judgement.reason) == (0.5, False, "Right method")


def test_submitting_is_refused_naming_the_parts_not_judged_and_keeps_the_draft(graded, interviewer):
    card = scorecards.scorecard_open(interview=graded, interviewer=interviewer)
    floor, why = keys(graded)
    scorecards.scorecard_save(scorecard=card, judgements={floor: Judge(confirmed=True)}, recommendation="no",
                              notes="kept")
    with pytest.raises(services.InterviewRefused, match=r"not judged yet: Q1/why \("):
        scorecards.scorecard_submit(scorecard=card)
    card.refresh_from_db()
    assert (card.status, card.notes) == (Scorecard.Status.DRAFT, "kept")
    scorecards.scorecard_save(scorecard=card, judgements={why: Judge(rubric_ticked=("kv",))}, recommendation="",
                              notes="kept")
    with pytest.raises(services.InterviewRefused, match="recommendation"):
        scorecards.scorecard_submit(scorecard=card)
    scorecards.scorecard_save(scorecard=card, judgements={}, recommendation="strong_yes", notes="kept")
    assert scorecards.scorecard_submit(scorecard=card).is_submitted
    with pytest.raises(services.InterviewRefused, match="already submitted"):
        scorecards.scorecard_save(scorecard=card, judgements={}, recommendation="no", notes="")


def test_a_late_verdict_updates_the_auto_score_of_parts_not_judged_yet(started_interview, interviewer, candidate):
    card = scorecards.scorecard_open(interview=started_interview, interviewer=interviewer)
    assert card.judgements.get(part_id="floor").auto_score is None
    question = started_interview.questions.select_related("question_version").get()
    attempt_grade(services.answer_submit(interview=started_interview, user=candidate, question=question,
                                         part_id="floor", answer="1000 ms").attempt.id)
    scorecards.scorecard_open(interview=started_interview, interviewer=interviewer)
    assert card.judgements.get(part_id="floor").auto_score == 0.0


# --- The page -------------------------------------------------------------------------------------

def form_data(interview, action="save", **fields):
    question = interview.questions.get()
    data = {"recommendation": "yes", "notes": "", "action": action}
    data.update({f"q{question.id}-{name}": value for name, value in fields.items()})
    return data


def test_the_page_opens_pre_filled_with_the_evidence(client, login_as, graded, interviewer):
    login_as(interviewer)
    page = client.get(reverse("interview-scorecard", args=[graded.id])).content.decode()
    assert 'data-part="Q1/floor"' in page and "wrong, score 0.00" in page
    assert 'class="hints">0<' in page and 'class="submissions">1' in page
    assert "KV-cache reads grow with batch and context" in page  # the rubric to tick
    assert PartJudgement.objects.filter(scorecard__interviewer=interviewer).count() == 2


def test_the_page_confirms_overrides_and_ticks_then_submits(client, login_as, graded, interviewer):
    login_as(interviewer)
    url = reverse("interview-scorecard", args=[graded.id])
    refused = client.post(url, form_data(graded, "save", **{"floor-override": "0.4"}))
    assert refused.status_code == 400 and b"say why you override" in refused.content
    assert client.post(url, form_data(graded, "save", **{"floor-override": "2"})).status_code == 400
    assert not PartJudgement.objects.filter(override_score__isnull=False).exists()

    missing = client.post(url, form_data(graded, "submit", **{"floor-confirm": "on"}))
    assert missing.status_code == 400 and b"not judged yet: Q1/why" in missing.content
    assert b'name="q' in missing.content and PartJudgement.objects.get(part_id="floor").confirmed  # nothing lost

    done = client.post(url, form_data(graded, "submit", **{"floor-override": "0.4", "floor-reason": "Close",
                                                           "why-tick": ["kv", "gaps"]}))
    assert done.status_code == 302
    card = Scorecard.objects.get()
    assert card.is_submitted and card.recommendation == "yes"
    assert card.judgements.get(part_id="why").rubric_ticked == ["gaps", "kv"]


def test_another_interviewer_neither_sees_nor_edits_my_scorecard(client, login_as, graded, interviewer,
                                                                second_interviewer):
    login_as(interviewer)
    url = reverse("interview-scorecard", args=[graded.id])
    client.post(url, form_data(graded, "save", **{"floor-override": "0.4", "floor-reason": "MY PRIVATE REASON"}))
    login_as(second_interviewer)
    assert b"MY PRIVATE REASON" not in client.get(url).content  # their own, fresh scorecard
    assert b"MY PRIVATE REASON" not in client.get(reverse("interview-transcript", args=[graded.id])).content
    client.post(url, form_data(graded, "save", **{"floor-override": "1", "floor-reason": "theirs"}))
    mine = Scorecard.objects.get(interviewer=interviewer).judgements.get(part_id="floor")
    assert (mine.override_score, mine.reason) == (0.4, "MY PRIVATE REASON")


def test_the_candidate_cannot_open_a_scorecard(client, login_as, graded, candidate):
    login_as(candidate)
    url = reverse("interview-scorecard", args=[graded.id])
    assert client.get(url).status_code == 404
    assert client.post(url, {"action": "save"}).status_code == 404
    assert not Scorecard.objects.exists()


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def test_the_scorecard_page_makes_the_same_queries_for_few_and_many_parts_and_events(
    client, login_as, interviewer, candidate, other_candidate, decode_question, code_question
):
    short = start(make_interview(interviewer, decode_question), candidate)
    attempt_grade(services.answer_submit(interview=short, user=candidate, question=short.questions.get(),
                                         part_id="floor", answer="1 ms").attempt.id)
    long = start(make_interview(interviewer, decode_question, code_question, decode_question), other_candidate)
    for question in long.questions.select_related("question_version").filter(position__in=[1, 3]):
        services.hint_take(interview=long, user=other_candidate, question=question)
    floor = long.questions.select_related("question_version").get(position=1)
    for index in range(4):
        attempt_grade(services.answer_submit(interview=long, user=other_candidate, question=floor, part_id="floor",
                                             answer=f"{index + 1} ms").attempt.id)
    login_as(interviewer)
    urls = [reverse("interview-scorecard", args=[interview.id]) for interview in (short, long)]
    first = [_queries(client, url) for url in urls]  # the opening that creates the judgements
    again = [_queries(client, url) for url in urls]
    assert first[0] == first[1] and again[0] == again[1], (first, again)
    assert again[0] <= 15
