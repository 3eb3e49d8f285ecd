"""The question page and the browser keep per-process caches of what every user sees the
same (the rendered variant, a list row's cells); these tests fail if a cache served one
variant's, one version's or one user's content in place of another's, and pin the
pages' query counts."""

from django.urls import reverse

from conftest import DECODE_FLOOR_YAML
from grading import services as grading_services
from questions.rendering import render_question
from questions.services import question_save_text
from questions.variants import draw_variant

SLUG = "test-decode-floor"
SOURCE = "questions/bank/roofline/001-test.yaml"


def _practise(client, seed: int):
    """Fix the variant the session practises, as the page draws it once per session."""
    session = client.session
    session[f"variant:{SLUG}"] = seed
    session.save()


def _seeds_per_gpu(version) -> dict[str, int]:
    question = version.as_question()
    seeds = {}
    for seed in range(200):
        seeds.setdefault(draw_variant(question, seed).choices["gpu"], seed)
    assert len(seeds) == 2, seeds
    return seeds


def _statement(version, seed: int) -> str:
    return render_question(version.as_question(), seed).statement_html


def _page(client) -> str:
    response = client.get(reverse("question-detail", args=[SLUG]))
    assert response.status_code == 200
    return response.content.decode()


def test_each_variant_gets_its_own_statement(client, login_as, candidate, other_candidate, decode_question):
    (gpu_a, seed_a), (gpu_b, seed_b) = sorted(_seeds_per_gpu(decode_question).items())
    statement_a, statement_b = _statement(decode_question, seed_a), _statement(decode_question, seed_b)
    assert statement_a != statement_b
    login_as(candidate)
    _practise(client, seed_a)
    body = _page(client)
    assert statement_a in body and statement_b not in body
    login_as(other_candidate)  # the same version, another variant, after the first is cached
    _practise(client, seed_b)
    body = _page(client)
    assert statement_b in body and statement_a not in body
    _practise(client, seed_a)  # and back: each seed keeps its own entry
    assert statement_a in _page(client)


def test_a_new_version_is_shown_at_once(client, login_as, candidate, decode_question):
    login_as(candidate)
    _practise(client, 7)
    assert "in BF16 on one" in _page(client)
    edited = question_save_text(DECODE_FLOOR_YAML.replace("in BF16 on one", "in BF16 weights on one"),
                                origin="file", source_path=SOURCE)
    assert edited.version is not None and edited.version.id != decode_question.id, edited.problems
    body = _page(client)
    assert "in BF16 weights on one" in body and "in BF16 on one" not in body


def test_a_new_version_shows_its_own_title_and_part_prompts_at_once(client, login_as, candidate, decode_question):
    """The header and each part's prompt are cached as rendered HTML per version and
    variant (question_detail.html's {% cache %} blocks)."""
    from django.core.cache import caches
    from django.core.cache.utils import make_template_fragment_key

    login_as(candidate)
    _practise(client, 7)
    body = _page(client)
    assert "The decode step's lower bound?" in body
    fragments = caches["template_fragments"]
    prompt_key = make_template_fragment_key("part_prompt", [decode_question.content_hash, 7, "floor"])
    assert "lower bound?" in fragments.get(prompt_key)
    assert "Decode floor (test question)" in fragments.get(
        make_template_fragment_key("question_static", [decode_question.content_hash, 7]))
    edited = question_save_text(
        DECODE_FLOOR_YAML.replace("The decode step's lower bound?", "The decode step's floor, in time?")
        .replace("Decode floor (test question)", "Decode floor, edited"),
        origin="file", source_path=SOURCE,
    )
    assert edited.version is not None, edited.problems
    body = _page(client)
    assert "floor, in time?" in body and "lower bound?" not in body
    assert "Decode floor, edited" in body and "Decode floor (test question)" not in body


def test_the_latest_answer_of_the_variant_shows_past_the_history_fetched(client, login_as, candidate,
                                                                         decode_question, monkeypatch):
    """question_page reads this variant's answers from the history when the history holds
    every answer, and asks for them apart when it does not."""
    from trainer import selectors

    monkeypatch.setattr(selectors, "_HISTORY_FETCHED", 2)
    for seed, answer in ((7, "1111 ms"), (8, "2222 ms"), (8, "3333 ms")):
        attempt = grading_services.attempt_submit(user=candidate, version=decode_question, part_id="floor",
                                                  seed=seed, answer=answer).attempt
        grading_services.attempt_grade(attempt.id)
    login_as(candidate)
    _practise(client, 7)
    body = _page(client)
    latest_verdict = body.split('id="history-floor"')[0]  # the part's verdict, before its history
    assert "Your answer: 1111 ms" in latest_verdict and "3333 ms" not in latest_verdict


def test_a_retitled_question_is_listed_under_its_new_title(client, login_as, candidate, decode_question):
    login_as(candidate)
    assert "Decode floor (test question)" in client.get(reverse("question-list")).content.decode()
    question_save_text(DECODE_FLOOR_YAML.replace("Decode floor (test question)", "Decode floor, retitled")
                       .replace("Weight bytes over HBM bandwidth.", "Weights over bandwidth, again."),
                       origin="file", source_path=SOURCE)
    body = client.get(reverse("question-list")).content.decode()
    assert "Decode floor, retitled" in body and "Weights over bandwidth, again." in body
    assert "Decode floor (test question)" not in body


def test_each_user_sees_their_own_status_in_the_list(client, login_as, candidate, other_candidate, decode_question):
    attempt = grading_services.attempt_submit(user=candidate, version=decode_question, part_id="floor", seed=7,
                                              answer="1000 ms").attempt
    grading_services.attempt_grade(attempt.id)
    login_as(candidate)
    assert 'class="status status-attempted">attempted<' in client.get(reverse("question-list")).content.decode()
    login_as(other_candidate)
    body = client.get(reverse("question-list")).content.decode()
    assert 'class="status status-new">new<' in body and "status-attempted" not in body


def test_each_user_sees_their_own_answers_on_a_cached_variant(client, login_as, candidate, other_candidate,
                                                              decode_question):
    attempt = grading_services.attempt_submit(user=candidate, version=decode_question, part_id="floor", seed=7,
                                              answer="1234 ms").attempt
    grading_services.attempt_grade(attempt.id)
    login_as(candidate)
    _practise(client, 7)
    assert "1234 ms" in _page(client)
    login_as(other_candidate)
    _practise(client, 7)
    assert "1234 ms" not in _page(client)


def _warm(client, url):
    assert client.get(url).status_code == 200  # draws the variant (a session write), fills the caches


def test_the_question_page_makes_eight_queries(client, login_as, candidate, decode_question,
                                                django_assert_num_queries):
    """Session, user, the user's and their groups' permissions, the question (its lock
    included), then this variant's answers, the earlier answers and the drafts."""
    login_as(candidate)
    url = reverse("question-detail", args=[SLUG])
    _warm(client, url)
    with django_assert_num_queries(8):
        assert client.get(url).status_code == 200


def test_the_question_browser_makes_six_queries(client, login_as, candidate, decode_question, kv_formula_question,
                                                django_assert_num_queries):
    """Session, user, permissions (two), the questions with their locks, the progress rows."""
    login_as(candidate)
    url = reverse("question-list")
    _warm(client, url)
    with django_assert_num_queries(6):
        body = client.get(url).content.decode()
    assert body.count('class="status status-new"') == 2
