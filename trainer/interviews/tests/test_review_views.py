"""Review pages: the transcript with playback, scorecards (private until submitted), exports."""

import json

import pytest
from django.urls import reverse

from grading import services as grading_services
from grading.models import Attempt
from trainer.interviews import services
from trainer.interviews.models import Scorecard
from trainer.interviews.tests.conftest import make_interview, start
from trainer.roles import Role


@pytest.fixture
def second_interviewer(started_interview, interviewer):
    from trainer.services import user_create

    member = user_create(username="interviewer2", password="a-long-test-password-1", role=Role.INTERVIEWER)
    services.interviewer_add(interview=started_interview, added_by=interviewer, username=member.username)
    return member


def scorecard_data(interview, action, **overrides):
    """The scorecard form with every part of `interview` confirmed, a recommendation and notes."""
    data = {"recommendation": "yes", "notes": "Clear on bandwidth.", "action": action}
    for question in interview.questions.all():
        for part in question.question_version.as_question().parts:
            data[f"q{question.id}-{part.id}-confirm"] = "on"
    data.update(overrides)
    return data


def test_transcript_shows_the_timeline_and_the_editor_playback(client, login_as, interviewer, candidate,
                                                               code_question):
    interview = start(make_interview(interviewer, code_question), candidate)
    question = interview.questions.get()
    for source in ("def total(xs):\n", "def total(xs):\n    return sum(xs)\n"):
        services.code_snapshot(interview=interview, user=candidate, question=question, part_id="impl", source=source)
    services.note_add(interview=interview, author=interviewer, text="Typed steadily")
    login_as(interviewer)
    page = client.get(reverse("interview-transcript", args=[interview.id])).content.decode()
    assert 'data-playback="playback-q1-impl-frames"' in page and 'id="playback-q1-impl-frames"' in page
    assert "return sum(xs)" in page and "Typed steadily" in page
    assert "interviews/playback.js" in page


def test_a_draft_scorecard_is_private_until_submitted(client, login_as, started_interview, interviewer,
                                                     second_interviewer):
    login_as(interviewer)
    url = reverse("interview-scorecard", args=[started_interview.id])
    assert client.post(url, scorecard_data(started_interview, "save")).status_code == 302
    card = Scorecard.objects.get(interviewer=interviewer)
    assert card.status == Scorecard.Status.DRAFT and card.recommendation == "yes"
    assert all(judgement.confirmed for judgement in card.judgements.all())
    transcript_url = reverse("interview-transcript", args=[started_interview.id])
    assert b"Clear on bandwidth." in client.get(transcript_url).content  # the author sees their draft
    login_as(second_interviewer)
    assert b"Clear on bandwidth." not in client.get(transcript_url).content
    assert b"Clear on bandwidth." not in client.get(
        reverse("interview-export", args=[started_interview.id, "md"])
    ).content
    assert b"Clear on bandwidth." not in client.get(url).content  # their own scorecard is a fresh one

    services.interview_end(interview=started_interview, ended_by=interviewer)
    login_as(interviewer)
    response = client.post(url, scorecard_data(started_interview, "submit"))
    assert response.status_code == 302 and response["Location"] == transcript_url
    login_as(second_interviewer)
    assert b"Clear on bandwidth." in client.get(transcript_url).content


def test_submitting_before_the_end_is_refused_with_the_reason(client, login_as, started_interview, interviewer):
    login_as(interviewer)
    response = client.post(reverse("interview-scorecard", args=[started_interview.id]),
                           scorecard_data(started_interview, "submit"))
    assert response.status_code == 400 and b"once the interview has ended" in response.content
    assert not Scorecard.objects.filter(status=Scorecard.Status.SUBMITTED).exists()


def test_a_submitted_scorecard_is_final(client, login_as, started_interview, interviewer):
    services.interview_end(interview=started_interview, ended_by=interviewer)
    login_as(interviewer)
    url = reverse("interview-scorecard", args=[started_interview.id])
    client.post(url, scorecard_data(started_interview, "submit"))
    assert client.post(url, scorecard_data(started_interview, "save", notes="changed")).status_code == 409
    assert Scorecard.objects.get().notes == "Clear on bandwidth."
    assert b"scorecard-submitted" in client.get(url).content


def test_rubric_items_of_explain_parts_can_be_ticked(client, login_as, started_interview, interviewer):
    question = started_interview.questions.get()
    login_as(interviewer)
    url = reverse("interview-scorecard", args=[started_interview.id])
    field = f"q{question.id}-why-tick"
    assert f'name="{field}" value="kv"' in client.get(url).content.decode()
    client.post(url, scorecard_data(started_interview, "save", **{field: ["kv"]}))
    (judgement,) = Scorecard.objects.get().judgements.filter(part_id="why")
    assert judgement.rubric_ticked == ["kv"]
    page = client.get(url).content.decode()
    assert f'name="{field}" value="kv"' in page and "checked" in page.split(f'name="{field}" value="kv"')[1][:40]
    assert client.post(url, scorecard_data(started_interview, "save", **{field: ["nope"]})).status_code == 400
    assert Scorecard.objects.get().judgements.get(part_id="why").rubric_ticked == ["kv"]


def test_exports_are_downloads_in_markdown_and_json(client, login_as, started_interview, interviewer):
    services.note_add(interview=started_interview, author=interviewer, text="Knows the roofline")
    login_as(interviewer)
    markdown = client.get(reverse("interview-export", args=[started_interview.id, "md"]))
    assert markdown["Content-Type"].startswith("text/markdown")
    assert f'filename="interview-{started_interview.id}.md"' in markdown["Content-Disposition"]
    assert b"Knows the roofline" in markdown.content
    exported = client.get(reverse("interview-export", args=[started_interview.id, "json"]))
    assert exported["Content-Type"] == "application/json"
    data = json.loads(exported.content)
    assert data["interview"]["candidate"] == "cand"
    assert [event["kind"] for event in data["events"]][:3] == ["created", "joined", "started"]


def test_the_transcript_shows_how_an_answer_was_read(client, interviewer, candidate, decode_question):
    """The panel sees what the engine understood beside what was typed (an order or
    match part's ids read as its items, arithmetic read as its value), and nothing extra
    when the two are the same."""
    interview = start(make_interview(interviewer, decode_question), candidate)
    question = interview.questions.get()
    for answer in ("2 * 500 ms", "4.2 ms"):
        services.answer_submit(interview=interview, user=candidate, question=question, part_id="floor", answer=answer)
    for attempt in Attempt.objects.all():
        grading_services.attempt_grade(attempt.id)
    client.force_login(interviewer)
    page = client.get(reverse("interview-transcript", args=[interview.id])).content.decode()
    readings = [attempt.stored_verdict.interpreted for attempt in Attempt.objects.order_by("id")]
    assert readings[0] != "2 * 500 ms" and f"read as {readings[0]}" in page
    assert readings[1] == "4.2 ms" and page.count("data-read-as") == 1
