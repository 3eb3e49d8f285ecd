"""The panel sees a lab question's data as its candidate saw it: the live monitor and the
transcript show the artifacts of the candidate's variant, with no download link (the
practice link would serve the interviewer's own variant; the room's is the candidate's
alone), and keep a fixed number of queries."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from questions.loader import BANK_DIR
from questions.services import question_save_text
from trainer import selectors as practice_selectors
from trainer.interviews.tests.conftest import make_interview, start

LAB_PATH = BANK_DIR / "debugging" / "114-cold-schema-warm-batch-traces.yaml"


@pytest.fixture
def lab_version(db):
    result = question_save_text(LAB_PATH.read_text(), origin="file", source_path=str(LAB_PATH))
    assert result.version is not None, result.problems
    return result.version


def _candidates_table(interview, lab_version) -> str:
    """The candidate's warm-steps table as the room renders it, for their variant."""
    seed = interview.questions.get(question_version=lab_version).variant_seed
    return practice_selectors.question_artifact(lab_version, seed, "warm-steps.csv").html


@pytest.mark.parametrize("page", ["interview-monitor", "interview-transcript"])
def test_the_panel_page_shows_the_candidates_artifacts_without_links(page, login_as, interviewer, candidate,
                                                                     decode_question, lab_version):
    interview = start(make_interview(interviewer, decode_question, lab_version), candidate)
    body = login_as(interviewer).get(reverse(page, args=[interview.id])).content.decode()
    assert _candidates_table(interview, lab_version) in body
    assert body.count('<svg class="trace-timeline"') == 2 and 'id="artifact-cold-engine"' in body
    assert "a class=\"artifact-download\"" not in body and "/artifacts/" not in body
    assert re.search(r'<script defer src="[^"]*trainer/artifacts\.js"', body)


def test_another_variant_shows_other_data_on_the_monitor(login_as, interviewer, candidate, other_candidate,
                                                         lab_version):
    first = start(make_interview(interviewer, lab_version), candidate)
    second = start(make_interview(interviewer, lab_version), other_candidate)
    # Two draws of 2**31 seeds almost never agree; when they do, move the second one,
    # so the test always compares two variants instead of skipping.
    first_seed = first.questions.get().variant_seed
    second.questions.filter(variant_seed=first_seed).update(variant_seed=first_seed + 1)
    client = login_as(interviewer)
    body = client.get(reverse("interview-monitor", args=[first.id])).content.decode()
    assert _candidates_table(first, lab_version) in body and _candidates_table(second, lab_version) not in body


def test_a_transcript_without_labs_has_no_lab_section(login_as, interviewer, candidate, decode_question):
    interview = start(make_interview(interviewer, decode_question), candidate)
    body = login_as(interviewer).get(reverse("interview-transcript", args=[interview.id])).content.decode()
    assert "Lab data" not in body and "artifacts.js" not in body


@pytest.mark.parametrize("page", ["interview-monitor", "interview-transcript"])
def test_the_labs_add_no_queries_per_artifact(page, login_as, interviewer, candidate, other_candidate,
                                              decode_question, lab_version):
    one = start(make_interview(interviewer, decode_question, lab_version), candidate)
    two_labs = start(make_interview(interviewer, decode_question, lab_version, lab_version), other_candidate)
    client = login_as(interviewer)
    counts = []
    for interview in (one, two_labs):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse(page, args=[interview.id])).status_code == 200
        counts.append(len(captured.captured_queries))
    assert counts[0] == counts[1]
