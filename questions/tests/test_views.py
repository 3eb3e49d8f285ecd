"""Authoring views: admins only; preview renders the candidate's partials for any variant."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from questions.models import Question, QuestionVersion
from questions.tests.factories import question_yaml

pytestmark = pytest.mark.django_db


def author_urls(slug):
    return [
        reverse("questions:preview", args=[slug]),
        reverse("questions:validate", args=[slug]),
        reverse("questions:export", args=[slug]),
        reverse("questions:import"),
    ]


@pytest.mark.parametrize("role", ["candidate", "candidate2", "interviewer"])
def test_non_authors_are_refused(client, users, stored_question, role):
    client.force_login(users[role])
    for url in author_urls(stored_question.slug):
        assert client.get(url).status_code == 403, url


def test_anonymous_users_are_sent_to_log_in(client, stored_question):
    for url in author_urls(stored_question.slug):
        response = client.get(url)
        assert response.status_code == 302 and "login" in response["Location"], url


def test_preview_shows_the_variant_picked_in_the_query(client, users, stored_question):
    client.force_login(users["admin"])
    response = client.get(
        reverse("questions:preview", args=[stored_question.slug]), {"gpu": "h200", "model": "llama33_70b"}
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "gpu=h200" in page and "model=llama33_70b" in page
    assert "H200" in page  # the statement's {{ gpu.name }}
    assert "<math" in page  # $t = W / B$ rendered to MathML
    assert 'id="part-floor"' in page and 'id="solution"' in page
    assert "Hint 1." in page
    assert "questions/question_body.html" in [template.name for template in response.templates]


def test_preview_reports_a_choice_that_is_not_offered(client, users, stored_question):
    client.force_login(users["admin"])
    response = client.get(reverse("questions:preview", args=[stored_question.slug]), {"gpu": "tpu_v5"})
    assert "Not one of the choices, ignored: gpu=tpu_v5" in response.content.decode()


def test_preview_of_an_unknown_question_is_404(client, users):
    client.force_login(users["admin"])
    assert client.get(reverse("questions:preview", args=["nope"])).status_code == 404


def test_validate_shows_ok_for_a_valid_question(client, users, stored_question):
    client.force_login(users["admin"])
    response = client.get(reverse("questions:validate", args=[stored_question.slug]))
    assert 'data-validation="ok"' in response.content.decode()


def test_validate_lists_problems_of_a_stored_version(client, users, stored_question):
    # A version stored before a stricter rule existed: validation must still report it.
    QuestionVersion.objects.filter(pk=stored_question.current_version_id).update(
        source_text=question_yaml().replace("difficulty: 2", "difficulty: 9")
    )
    client.force_login(users["admin"])
    page = client.get(reverse("questions:validate", args=[stored_question.slug])).content.decode()
    assert 'data-validation="failed"' in page and "difficulty 9 must be 1, 2 or 3" in page


def test_export_downloads_the_file_text(client, users, stored_question):
    client.force_login(users["admin"])
    response = client.get(reverse("questions:export", args=[stored_question.slug]))
    assert response["Content-Disposition"] == 'attachment; filename="001-decode-floor-test.yaml"'
    assert response.content.decode() == question_yaml()


def test_import_creates_a_new_version(client, users, stored_question):
    client.force_login(users["admin"])
    upload = SimpleUploadedFile("q.yaml", question_yaml(title="Imported title").encode())
    response = client.post(reverse("questions:import"), {"file": upload})
    assert response.status_code == 302
    question = Question.objects.get()
    assert question.title == "Imported title"
    assert question.current_version.number == 2
    assert question.current_version.origin == QuestionVersion.Origin.BROWSER
    assert question.current_version.created_by == users["admin"]


def test_import_of_a_new_question_is_unreleased_unless_asked(client, users):
    client.force_login(users["admin"])
    client.post(reverse("questions:import"), {"file": SimpleUploadedFile("q.yaml", question_yaml().encode())})
    assert Question.objects.get().is_released is False


def test_import_of_an_invalid_file_shows_problems_and_stores_nothing(client, users):
    client.force_login(users["admin"])
    upload = SimpleUploadedFile("q.yaml", question_yaml(topic="astrology").encode())
    response = client.post(reverse("questions:import"), {"file": upload})
    assert response.status_code == 400
    assert "unknown topic" in response.content.decode()
    assert not Question.objects.exists()
