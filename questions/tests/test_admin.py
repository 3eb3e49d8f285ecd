"""The Django admin edits a question's YAML: valid text makes a new version, invalid text
is refused with its problems, and only authors get in."""

import pytest
from django.urls import reverse

from questions.models import Question, QuestionVersion
from questions.tests.factories import question_yaml

pytestmark = pytest.mark.django_db


def change_url(question):
    return reverse("admin:questions_question_change", args=[question.pk])


def test_saving_changed_yaml_creates_a_browser_version(client, users, stored_question):
    client.force_login(users["admin"])
    response = client.post(change_url(stored_question), {
        "is_released": "on",
        "source_text": question_yaml(title="Retitled in the admin"),



    })
    assert response.status_code == 302, response.content.decode()[:2000]
    question = Question.objects.get()
    assert question.title == "Retitled in the admin"
    assert question.current_version.number == 2
    assert question.current_version.origin == QuestionVersion.Origin.BROWSER


def test_invalid_yaml_is_shown_and_not_saved(client, users, stored_question):
    client.force_login(users["admin"])
    response = client.post(change_url(stored_question), {
        "is_released": "on",
        "source_text": question_yaml().replace("topic: roofline", "topic: astrology"),
    })
    assert response.status_code == 200
    assert "unknown topic &#x27;astrology&#x27;" in response.content.decode()
    assert Question.objects.get().versions.count() == 1


def test_unreleasing_keeps_the_version(client, users, stored_question):
    client.force_login(users["admin"])
    client.post(change_url(stored_question), {"source_text": question_yaml()})
    question = Question.objects.get()
    assert question.is_released is False
    assert question.versions.count() == 1


def test_change_form_shows_the_current_yaml(client, users, stored_question):
    client.force_login(users["admin"])
    page = client.get(change_url(stored_question)).content.decode()
    assert "slug: decode-floor-test" in page


@pytest.mark.parametrize("role", ["candidate", "interviewer"])
def test_non_admins_cannot_use_the_admin(client, users, stored_question, role):
    client.force_login(users[role])
    response = client.get(change_url(stored_question))
    assert response.status_code == 302 and "login" in response["Location"]


def test_staff_without_the_author_permission_sees_nothing(client, users, stored_question):
    users["interviewer"].is_staff = True
    users["interviewer"].save()
    client.force_login(users["interviewer"])
    assert client.get(change_url(stored_question)).status_code == 403


def test_adding_a_question_from_yaml(client, users):
    client.force_login(users["admin"])
    assert client.get(reverse("admin:questions_question_add")).status_code == 200
    response = client.post(reverse("admin:questions_question_add"), {"source_text": question_yaml()})
    assert response.status_code == 302
    question = Question.objects.get()
    assert (question.slug, question.is_released, question.current_version.origin) == (
        "decode-floor-test", False, QuestionVersion.Origin.BROWSER
    )


def test_the_question_list_shows_versions(client, users, stored_question):
    client.force_login(users["admin"])
    page = client.get(reverse("admin:questions_question_changelist")).content.decode()
    assert "decode-floor-test" in page


def test_the_interview_only_box_is_written_into_the_stored_text(client, users, stored_question):
    client.force_login(users["admin"])
    response = client.post(change_url(stored_question), {
        "is_released": "on", "interview_only": "on", "source_text": question_yaml(),
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    question = Question.objects.get()
    assert question.interview_only is True
    assert question.current_version.number == 2
    assert question.current_version.source_text.endswith("\ninterview_only: true\n")
    assert question.current_version.as_question().interview_only is True

    # Unticking removes the key again; the text stays valid.
    response = client.post(change_url(question), {
        "is_released": "on", "source_text": question.current_version.source_text,
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    question.refresh_from_db()
    assert question.interview_only is False
    assert "interview_only" not in question.current_version.source_text


def test_the_interview_only_key_typed_in_the_text_counts_when_the_box_is_untouched(client, users, stored_question):
    client.force_login(users["admin"])
    response = client.post(change_url(stored_question), {
        "is_released": "on", "source_text": question_yaml(interview_only=True),
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Question.objects.get().interview_only is True
