"""The scratchpad end to end in Chromium with a real worker: on decode-floor-from-weights a
candidate's working that divides by one GPU's bandwidth is told its second step went
wrong (with the listed mistake's feedback and the partial credit), and the same working
done right is marked step by step; an interviewer's transcript shows the working."""

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.urls import reverse

from conftest import log_in
from grading import services as grading_services
from grading.models import Attempt
from questions.variants import draw_variant
from trainer.interviews import services as interview_services
from trainer.interviews.tests.conftest import make_interview, start
from trainer.tests.csp_watch import assert_no_csp_violations, watch_csp

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SLUG = "decode-floor-from-weights"
VARIANT = {"gpu": "h100_sxm", "model": "llama33_70b", "dtype": "bf16", "batch": 16, "context": 4096}
ONE_GPU = ["w = (70.6e9 - 128256 * 8192) * 2 B", "t = w / 3.35 TB/s", "floor = t * 1"]
RIGHT = ["w = (70.6e9 - 128256 * 8192) * 2 B", "bw = 4 * 3.35 TB/s", "t = w / bw"]


@pytest.fixture
def floor_version(db):
    from pathlib import Path

    from questions.services import question_save_text

    relative = "roofline/001-decode-floor-from-weights.yaml"
    text = (Path(__file__).resolve().parents[2] / "questions" / "bank" / relative).read_text()
    result = question_save_text(text, origin="file", source_path=f"questions/bank/{relative}")
    assert result.version is not None, result.problems
    return result.version


def _seed(version) -> int:
    question = version.as_question()
    return next(seed for seed in range(5000)
                if all(draw_variant(question, seed).choices[name] == value for name, value in VARIANT.items()))


def _practise_variant(page, seed: int) -> None:
    """Put this browser's practice session on variant `seed` (the page draws one at random)."""
    cookie = next(cookie for cookie in page.context.cookies() if cookie["name"] == "sessionid")
    session = SessionStore(session_key=cookie["value"])
    session[f"variant:{SLUG}"] = seed
    session.save()


def _work(page, lines: list[str]) -> None:
    box = page.locator("#part-floor textarea[name=scratchpad]")
    box.fill("\n".join(lines))
    # Each line previews its value as it is typed, through the interpret path.
    page.locator(f'#scratchpad-lines-floor li[data-line="{len(lines)}"]').wait_for()


def test_the_scratchpad_finds_the_first_wrong_step_and_marks_right_working(
    live_server, page, candidate, floor_version, grading_worker
):
    csp = watch_csp(page)
    log_in(page, live_server.url, candidate.username)
    page.goto(f"{live_server.url}/questions/{SLUG}/")
    _practise_variant(page, _seed(floor_version))
    page.goto(f"{live_server.url}/questions/{SLUG}/")
    page.locator("#scratchpad-floor summary").click()
    assert "earns 50% of the part" in page.locator('#scratchpad-floor [data-rule="steps"]').inner_text()

    _work(page, ONE_GPU)
    preview = page.locator("#scratchpad-lines-floor")
    assert "139 GB" in preview.locator('li[data-line="1"]').inner_text()
    assert "41.5 ms" in preview.locator('li[data-line="2"]').inner_text()
    page.locator("#part-floor button[type=submit]").click()
    verdict = page.locator("#verdict-floor")
    verdict.locator('[data-verdict="wrong"]').wait_for()
    wrong = verdict.locator("[data-first-wrong]")
    assert wrong.get_attribute("data-line") == "2"
    assert "bandwidths add up" in wrong.inner_text()
    assert "shown once the part is solved" in wrong.inner_text()  # 10.4 ms is not given away
    assert "10.4 ms" not in verdict.inner_text()
    assert verdict.locator('[data-step="intermediate"]').first.inner_text().count("weight bytes") == 1
    assert "score 0.50" in verdict.inner_text()

    _work(page, RIGHT)
    page.locator("#part-floor button[type=submit]").click()
    verdict.locator('[data-verdict="correct"]').wait_for()
    marks = [item.inner_text() for item in verdict.locator('[data-step="intermediate"] .step-ok').all()]
    assert marks == ["✓ weight bytes", "✓ aggregate bandwidth", "✓ the decode floor"]
    assert verdict.locator("[data-first-wrong]").count() == 0
    attempts = Attempt.objects.filter(user=candidate, part_id="floor").order_by("id")
    assert [attempt.scratchpad.splitlines() for attempt in attempts] == [ONE_GPU, RIGHT]
    assert_no_csp_violations(page, csp)


def test_the_interview_transcript_shows_the_working(live_server, page, interviewer, candidate, floor_version):
    interview = start(make_interview(interviewer, floor_version), candidate)
    question = interview.questions.get()
    question.variant_seed = _seed(floor_version)
    question.save(update_fields=["variant_seed"])
    result = interview_services.answer_submit(interview=interview, user=candidate, question=question,
                                              part_id="floor", answer="", scratchpad="\n".join(ONE_GPU))
    grading_services.attempt_grade(result.attempt.id)

    log_in(page, live_server.url, interviewer.username)
    page.goto(f"{live_server.url}{reverse('interview-transcript', args=[interview.id])}")
    record = page.locator("[data-scratchpad]")
    assert record.locator("pre").inner_text().splitlines() == ONE_GPU
    entry = page.locator('li[data-kind="answer"]')
    assert entry.locator("[data-first-wrong]").get_attribute("data-line") == "2"
    assert "expected 10.4 ms here" in entry.locator("[data-first-wrong]").inner_text()  # interviewers see it
