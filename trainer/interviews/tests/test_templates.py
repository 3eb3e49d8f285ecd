"""Interview templates say whose they are: private to their creator until shared, shared
ones name their creator, only the creator changes one, admins see every one."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from trainer.interviews import template_services
from trainer.interviews.models import Interview, InterviewTemplate


@pytest.fixture
def private_template(interviewer, decode_question):
    return template_services.template_save(name="Roofline screen", created_by=interviewer,
                                           questions=[decode_question.question])


def template_page(client):
    return client.get(reverse("interview-templates")).content.decode()


def create_page_options(client) -> str:
    body = client.get(reverse("interview-create")).content.decode()
    return body[body.index('id="id_template"'):body.index("</select>", body.index('id="id_template"'))]


def test_a_new_template_is_private_to_its_creator(client, login_as, interviewer, other_interviewer,
                                                  private_template):
    assert not private_template.shared
    login_as(interviewer)
    assert "Roofline screen (yours)" in create_page_options(client)
    assert "Roofline screen" in template_page(client)
    login_as(other_interviewer)
    assert "Roofline screen" not in create_page_options(client)
    assert "Roofline screen" not in template_page(client)


def test_a_template_saved_from_the_create_form_is_private(client, login_as, interviewer, decode_question):
    login_as(interviewer)
    client.post(reverse("interview-create"), {"title": "Screen", "questions": [decode_question.question_id],
                                              "time_limit_minutes": "30", "save_as_template": "Mine"})
    assert not InterviewTemplate.objects.get(name="Mine").shared


def test_another_interviewer_cannot_apply_a_private_template(client, login_as, other_interviewer,
                                                             private_template):
    login_as(other_interviewer)
    response = client.post(reverse("interview-create"), {"title": "Screen", "template": private_template.id,
                                                         "time_limit_minutes": "30"})
    assert response.status_code == 200 and not Interview.objects.exists()


def test_once_shared_others_see_it_named_by_its_creator_and_can_use_it(
    client, login_as, interviewer, other_interviewer, private_template, decode_question
):
    login_as(interviewer)
    edit = reverse("interview-template-edit", args=[private_template.id])
    prefix = f"t{private_template.id}"
    assert client.post(edit, {f"{prefix}-name": "Roofline screen", f"{prefix}-shared": "on"}).status_code == 302
    private_template.refresh_from_db()
    assert private_template.shared
    assert "yours, shared" in template_page(client)

    login_as(other_interviewer)
    assert "Roofline screen (shared by interviewer1)" in create_page_options(client)
    page = template_page(client)
    assert "shared by interviewer1" in page and "only its creator can change it" in page
    assert edit not in page
    client.post(reverse("interview-create"), {"title": "Screen", "template": private_template.id,
                                              "time_limit_minutes": "30"})
    interview = Interview.objects.get()
    assert list(interview.questions.values_list("question_version", flat=True)) == [decode_question.id]


def test_only_the_creator_can_rename_share_or_delete(client, login_as, interviewer, other_interviewer,
                                                     admin_user, candidate, private_template):
    edit = reverse("interview-template-edit", args=[private_template.id])
    delete = reverse("interview-template-delete", args=[private_template.id])
    prefix = f"t{private_template.id}"
    renamed = {f"{prefix}-name": "Taken over", f"{prefix}-shared": "on"}

    login_as(other_interviewer)  # cannot see it: as if it did not exist
    assert client.post(edit, renamed).status_code == 404
    assert client.post(delete).status_code == 404

    private_template.shared = True
    private_template.save(update_fields=["shared"])
    assert client.post(edit, renamed).status_code == 403  # sees it, does not own it
    assert client.post(delete).status_code == 403

    login_as(admin_user)  # sees every template, changes none but their own
    assert client.post(edit, renamed).status_code == 403
    assert client.post(delete).status_code == 403

    login_as(candidate)
    assert client.get(reverse("interview-templates")).status_code == 403
    assert client.post(edit, renamed).status_code == 404

    private_template.refresh_from_db()
    assert private_template.name == "Roofline screen" and private_template.shared

    login_as(interviewer)
    assert client.post(edit, {f"{prefix}-name": "Roofline, private again"}).status_code == 302
    private_template.refresh_from_db()
    assert private_template.name == "Roofline, private again" and not private_template.shared
    assert client.post(delete).status_code == 302
    assert not InterviewTemplate.objects.exists()


def test_an_admin_sees_every_template_with_whose_it_is(client, login_as, admin_user, private_template):
    login_as(admin_user)
    assert "Roofline screen (interviewer1&#x27;s, private)" in create_page_options(client)
    assert "interviewer1&#x27;s, private" in template_page(client)


def test_the_templates_page_takes_the_same_queries_whatever_it_lists(
    client, login_as, interviewer, other_interviewer, decode_question, django_assert_num_queries
):
    template_services.template_save(name="One", created_by=interviewer, questions=[decode_question.question])
    login_as(interviewer)
    with CaptureQueriesContext(connection) as few:
        template_page(client)
    for index in range(3):
        template_services.template_save(name=f"Mine {index}", created_by=interviewer,
                                        questions=[decode_question.question])
        template_services.template_save(name=f"Theirs {index}", created_by=other_interviewer,
                                        questions=[decode_question.question], shared=True)
    with django_assert_num_queries(len(few.captured_queries)):
        assert template_page(client).count("<tr data-template=") == 7


@pytest.mark.django_db(transaction=True)
def test_the_migration_shares_the_templates_that_existed(interviewer, decode_question):
    """Before, every interviewer saw every template: none disappears from anyone."""
    executor = MigrationExecutor(connection)
    executor.migrate([("interviews", "0002_code_run_runs_the_examples")])
    old_apps = executor.loader.project_state([("interviews", "0002_code_run_runs_the_examples")]).apps
    old_apps.get_model("interviews", "InterviewTemplate").objects.create(name="Old", created_by_id=interviewer.id)
    call_command("migrate", "interviews", verbosity=0)
    assert InterviewTemplate.objects.get(name="Old").shared
