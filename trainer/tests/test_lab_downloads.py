"""A lab question's page shows its data, and its download links serve the bytes under
the page's rule: practice's (permission, interview-only, the live-interview lock) and
the interview room's (the candidate only, once started)."""

import json

import pytest
from django.urls import reverse

from questions.loader import BANK_DIR
from questions.models import Question as BankQuestion
from questions.services import question_save_text
from trainer import selectors
from trainer.interviews.tests.conftest import join, make_interview, start

LAB_PATH = BANK_DIR / "debugging" / "114-cold-schema-warm-batch-traces.yaml"
SLUG = "cold-schema-warm-batch-traces"


@pytest.fixture
def lab_version(db):
    result = question_save_text(LAB_PATH.read_text(), origin="file", source_path=str(LAB_PATH))
    assert result.version is not None, result.problems
    return result.version


def _download(client, name="warm-batch.json"):
    return client.get(reverse("question-artifact", args=[SLUG, name]))


def test_the_page_shows_the_table_and_the_timeline(login_as, candidate, lab_version):
    client = login_as(candidate)
    body = client.get(reverse("question-detail", args=[SLUG])).content.decode()
    assert body.count('<svg class="trace-timeline"') == 2 and '<table class="sortable"' in body
    assert 'download="warm-batch.json"' in body and reverse("question-artifact", args=[SLUG, "warm-steps.csv"]) in body


def test_a_download_returns_the_variants_bytes(login_as, candidate, lab_version):
    client = login_as(candidate)
    client.get(reverse("question-detail", args=[SLUG]))
    seed = client.session[f"variant:{SLUG}"]
    response = _download(client)
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert 'filename="warm-batch.json"' in response["Content-Disposition"]
    assert response.content == selectors.question_artifact(lab_version, seed, "warm-batch.json").data
    assert "traceEvents" in json.loads(response.content)
    csv = _download(client, "warm-steps.csv")
    assert csv["Content-Type"].startswith("text/csv") and csv.content.startswith(b"step,step_start_ms,")


def test_an_unknown_artifact_is_404(login_as, candidate, lab_version):
    assert _download(login_as(candidate), "secrets.json").status_code == 404


def test_anonymous_users_are_sent_to_log_in(client, lab_version):
    assert _download(client).status_code == 302


def test_interview_only_labs_are_404_in_practice(login_as, candidate, lab_version):
    BankQuestion.objects.filter(id=lab_version.question_id).update(interview_only=True)
    assert _download(login_as(candidate)).status_code == 404


def test_a_lab_a_live_interview_asks_is_locked_in_practice(login_as, candidate, other_candidate, interviewer,
                                                           lab_version):
    start(make_interview(interviewer, lab_version), candidate)
    response = _download(login_as(other_candidate))
    assert response.status_code == 403 and b"traceEvents" not in response.content


def _room_download(client, interview, name="cold-schema.json"):
    return client.get(reverse("interview-artifact", args=[interview.id, 1, name]))


def test_the_interview_room_serves_its_candidate_the_questions_variant(login_as, candidate, interviewer, lab_version):
    interview = start(make_interview(interviewer, lab_version), candidate)
    client = login_as(candidate)
    page = client.get(reverse("interview-room", args=[interview.id])).content.decode()
    href = reverse("interview-artifact", args=[interview.id, 1, "cold-schema.json"])
    assert href in page and '<svg class="trace-timeline"' in page
    response = _room_download(client, interview)
    question = interview.questions.get(position=1)
    assert response.status_code == 200
    assert response.content == selectors.question_artifact(lab_version, question.variant_seed, "cold-schema.json").data


@pytest.mark.parametrize("who", ["other_candidate", "interviewer"])
def test_the_room_download_refuses_anyone_but_the_candidate(request, login_as, candidate, interviewer, lab_version,
                                                            who):
    interview = start(make_interview(interviewer, lab_version), candidate)
    assert _room_download(login_as(request.getfixturevalue(who)), interview).status_code == 404


def test_the_room_download_waits_for_the_start(login_as, candidate, interviewer, lab_version):
    interview = make_interview(interviewer, lab_version)
    join(interview, candidate)
    assert _room_download(login_as(candidate), interview).status_code == 404
