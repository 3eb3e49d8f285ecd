"""web → Redis → worker → PostgreSQL → page, with real processes."""

import json
import time
import urllib.error
import urllib.request

import pytest

pytestmark = pytest.mark.integration


def _latest_attempt(pg):
    return pg.execute(
        "SELECT id, status, correct, variant_seed FROM grading_attempt ORDER BY id DESC LIMIT 1"
    ).fetchone()


def _reference(pg, seed):
    import grading
    from questions.schema import Question
    from questions.variants import draw_variant

    data = pg.execute(
        "SELECT v.data_json FROM questions_questionversion v JOIN questions_question q ON q.current_version_id = v.id "
        "WHERE q.slug = 'test-decode-floor'"
    ).fetchone()[0]
    question = Question.from_data(json.loads(data))
    kind = grading.get_kind("numeric")
    return kind.reference_answer(kind.load_spec(question.part("floor").raw), draw_variant(question, seed).context)


def test_healthz_sees_postgres_redis_and_a_consuming_worker(web, worker):
    # The worker may still be busy with answers an earlier test left queued: a heartbeat
    # lands between them, within a few intervals.
    deadline, body = time.monotonic() + 60, None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{web}/healthz", timeout=10) as response:
                body = json.load(response)
                break
        except urllib.error.HTTPError as error:
            body = json.load(error)
            time.sleep(0.5)
    assert body == {"database": "ok", "broker": "ok", "workers": "ok", "status": "ok"}


def _log_in(page, web):
    page.goto(f"{web}/accounts/login/")
    page.fill("#id_username", "candidate")
    page.fill("#id_password", "candidate-demo-pass")
    page.click("main button[type=submit]")
    page.wait_for_url(f"{web}/questions/")


def test_answer_travels_through_redis_and_the_worker(web, worker, page, pg):
    _log_in(page, web)
    page.goto(f"{web}/questions/test-decode-floor/")
    page.evaluate("window.__no_reload_marker = 7")
    box = page.locator("#part-floor input[name=answer]")
    box.fill("1000 ms")
    page.locator("#part-floor button[type=submit]").click()
    page.locator('#verdict-floor [data-verdict="wrong"]').wait_for()
    attempt_id, status, correct, seed = _latest_attempt(pg)
    assert (status, correct) == ("graded", False)

    box.fill(_reference(pg, seed))
    page.locator("#part-floor button[type=submit]").click()
    page.locator('#verdict-floor [data-verdict="correct"]').wait_for()
    assert page.evaluate("window.__no_reload_marker") == 7
    assert _latest_attempt(pg)[1:3] == ("graded", True)


def test_an_answer_accepted_while_no_worker_runs_is_graded_when_one_starts(web, worker, page, pg):
    worker.stop()
    _log_in(page, web)
    page.goto(f"{web}/questions/test-decode-floor/")
    page.locator("#part-floor input[name=answer]").fill("2 ms")
    page.locator("#part-floor button[type=submit]").click()
    page.get_by_text("Grading…").wait_for()
    assert _latest_attempt(pg)[1] == "queued"  # stored in PostgreSQL, waiting in Redis

    worker.start()
    page.locator('#verdict-floor [data-verdict]').wait_for(timeout=30_000)
    assert _latest_attempt(pg)[1] == "graded"
