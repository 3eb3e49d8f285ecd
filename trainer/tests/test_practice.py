"""The answer flow: read, store, queue, grade, poll; invalid input costs nothing."""

from django.urls import reverse

from grading import services
from grading.models import Attempt

HTMX = {"HTTP_HX_REQUEST": "true"}


def _page(client, version):
    return client.get(reverse("question-detail", args=[version.question.slug]))


def test_question_page_renders_the_variant(client, login_as, candidate, decode_question):
    login_as(candidate)
    response = _page(client, decode_question)
    assert response.status_code == 200
    body = response.content.decode()
    assert "Llama" in body and "TB/s" in body
    assert 'hx-post="/questions/test-decode-floor/parts/floor/answer/"' in body


def test_unreadable_answer_costs_no_attempt(client, login_as, candidate, decode_question):
    login_as(candidate)
    url = reverse("submit-answer", args=["test-decode-floor", "floor"])
    response = client.post(url, {"answer": "4 GB"}, **HTMX)
    assert response.status_code == 200
    assert 'data-verdict="invalid"' in response.content.decode()
    assert Attempt.objects.count() == 0


def test_valid_answer_is_stored_queued_then_graded_by_the_task(
    client, login_as, candidate, decode_question, django_capture_on_commit_callbacks
):
    login_as(candidate)
    session = client.session
    session["variant:test-decode-floor"] = 7
    session.save()
    url = reverse("submit-answer", args=["test-decode-floor", "floor"])
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(url, {"answer": "1000 ms"}, **HTMX)
    attempt = Attempt.objects.get()
    assert attempt.status == Attempt.Status.QUEUED
    assert len(callbacks) == 1  # the grading task is queued only once the row is committed
    assert "hx-trigger=\"every 400ms\"" in response.content.decode()

    services.attempt_grade(attempt.id)
    attempt.refresh_from_db()
    assert attempt.status == Attempt.Status.GRADED
    assert attempt.correct is False

    poll = client.get(reverse("attempt-status", args=[attempt.id]), **HTMX)
    assert poll.status_code == 286  # htmx stops polling
    assert 'data-verdict="wrong"' in poll.content.decode()


def _reference_answer(version, seed):
    import grading
    from questions.variants import draw_variant

    question = version.as_question()
    context = draw_variant(question, seed).context
    return grading.get_kind("numeric").reference_answer(
        grading.get_kind("numeric").load_spec(question.part("floor").raw), context
    )


def test_correct_answer_is_graded_correct_and_grading_twice_changes_nothing(candidate, decode_question):
    answer = _reference_answer(decode_question, seed=3)
    result = services.attempt_submit(user=candidate, version=decode_question, part_id="floor", seed=3, answer=answer)
    first = services.attempt_grade(result.attempt.id)
    assert first.correct is True and first.score == 1.0
    second = services.attempt_grade(result.attempt.id)
    assert (second.status, second.tries, second.graded_at) == (first.status, first.tries, first.graded_at)


def test_hints_reduce_the_score(candidate, decode_question):
    answer = _reference_answer(decode_question, seed=3)
    result = services.attempt_submit(
        user=candidate, version=decode_question, part_id="floor", seed=3, answer=answer, hints_used=1
    )
    assert services.attempt_grade(result.attempt.id).score == 0.9


def test_an_attempt_that_keeps_killing_workers_ends_failed(candidate, decode_question):
    result = services.attempt_submit(user=candidate, version=decode_question, part_id="floor", seed=3, answer="1 ms")
    # Three deliveries claimed it and died before writing a verdict.
    Attempt.objects.filter(id=result.attempt.id).update(status=Attempt.Status.RUNNING, tries=services.MAX_GRADING_TRIES)
    attempt = services.attempt_grade(result.attempt.id)
    assert attempt.status == Attempt.Status.FAILED
    assert "interrupted" in attempt.failure_reason


def test_unknown_part_is_refused(client, login_as, candidate, decode_question):
    login_as(candidate)
    response = client.post(reverse("submit-answer", args=["test-decode-floor", "nope"]), {"answer": "1"}, **HTMX)
    assert response.status_code == 400


def test_explanation_is_recorded_then_self_assessed_against_the_rubric(client, login_as, candidate, decode_question):
    login_as(candidate)
    result = services.attempt_submit(
        user=candidate, version=decode_question, part_id="why", seed=3,
        answer="Because KV reads grow with the batch and the context."
    )
    services.attempt_grade(result.attempt.id)
    poll = client.get(reverse("attempt-status", args=[result.attempt.id]), **HTMX)
    body = poll.content.decode()
    assert 'data-verdict="recorded"' in body
    assert "KV reads add bytes" in body and 'value="kv"' in body and 'value="gaps"' in body

    response = client.post(reverse("self-assess", args=[result.attempt.id]), {"item": ["kv"]}, **HTMX)
    assert response.status_code == 200
    attempt = Attempt.objects.get(id=result.attempt.id)
    assert attempt.score == 0.5 and attempt.verdict["rubric_ticked"] == ["kv"]
    assert client.post(reverse("self-assess", args=[result.attempt.id]), {"item": ["bogus"]}, **HTMX).status_code == 400


def test_empty_explanation_costs_no_attempt(client, login_as, candidate, decode_question):
    login_as(candidate)
    response = client.post(reverse("submit-answer", args=["test-decode-floor", "why"]), {"answer": "   "}, **HTMX)
    assert 'data-verdict="invalid"' in response.content.decode()
    assert Attempt.objects.count() == 0
