"""Candidates by the names they gave: the join form asks for a name (and an email when
the interview asks for one), and every page and export the panel reads, and the
candidate's own navigation, shows that name, never a guest's id, always as text."""

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from trainer.interviews import services, transcript
from trainer.interviews.models import Interview
from trainer.interviews.tests.conftest import make_interview

HOSTILE = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
MARKDOWN_BREAKER = "```\n# Hired"  # a fence opener, then a heading on a line of its own


def join_url(interview):
    return reverse("interview-join", args=[interview.invite_token])


def guest_join(client, interview, **data):
    client.logout()
    return client.post(join_url(interview), data)


def nothing_used(interview, users_before: int) -> bool:
    interview.refresh_from_db()
    return (interview.invite_used_at is None and interview.candidate_id is None
            and get_user_model().objects.count() == users_before)


# --- The join form -------------------------------------------------------------------------

def test_a_guest_must_give_a_name_and_an_empty_one_costs_nothing(client, interview):
    users = get_user_model().objects.count()
    for name in ("", "   ", "\n\t", "\x07"):
        response = guest_join(client, interview, name=name)
        assert response.status_code == 200 and b"Tell us your name: the interviewer will see it." in response.content
        assert nothing_used(interview, users)
    assert guest_join(client, interview, name="Grace").status_code == 302


def test_the_email_field_is_only_there_when_the_interview_asks(client, interviewer, decode_question):
    plain = make_interview(interviewer, decode_question)
    asking = services.interview_create(
        created_by=interviewer, title="Screen", questions=[decode_question.question],
        time_limit=plain.time_limit, hints_allowed=True, solutions_allowed=False, email_required=True,
    )
    assert b'id="id_email"' not in client.get(join_url(plain)).content
    assert b'id="id_email"' in client.get(join_url(asking)).content


@pytest.fixture
def asking_form_data(decode_question):
    """The create form, with "ask the candidate for an email" ticked."""
    return {"title": "Screen", "questions": [decode_question.question_id], "time_limit_minutes": "30",
            "email_required": "on"}


def test_the_create_form_can_ask_for_an_email(client, login_as, interviewer, decode_question, asking_form_data):
    login_as(interviewer)
    assert b'id="id_email_required"' in client.get(reverse("interview-create")).content
    client.post(reverse("interview-create"), asking_form_data)
    assert Interview.objects.get().email_required


def test_when_asked_a_missing_or_invalid_email_is_refused_clearly_and_costs_nothing(
    client, login_as, interviewer, asking_form_data
):
    login_as(interviewer)
    client.post(reverse("interview-create"), asking_form_data)
    interview = Interview.objects.get()
    users = get_user_model().objects.count()

    missing = guest_join(client, interview, name="Grace")
    assert missing.status_code == 200 and b"This interview asks for your email address." in missing.content
    assert nothing_used(interview, users)
    for bad in ("grace", "grace@", "grace@example", "<b>@x.org"):
        invalid = guest_join(client, interview, name="Grace", email=bad)
        assert invalid.status_code == 200
        assert b"Enter a valid email address, such as ada@example.com." in invalid.content
        assert nothing_used(interview, users)

    assert guest_join(client, interview, name="Grace", email=" grace@example.org ").status_code == 302
    interview.refresh_from_db()
    assert interview.candidate_email == "grace@example.org" and interview.candidate_display_name == "Grace"


def test_the_service_refuses_a_bad_email_too_before_making_a_guest(interviewer, decode_question):
    interview = services.interview_create(
        created_by=interviewer, title="Screen", questions=[decode_question.question],
        time_limit=make_interview(interviewer, decode_question).time_limit, hints_allowed=True,
        solutions_allowed=False, email_required=True,
    )
    users = get_user_model().objects.count()
    for email in ("", "not an address"):
        with pytest.raises(services.InterviewRefused):
            services.invite_accept(token=interview.invite_token, guest_name="Grace", email=email)
        assert nothing_used(interview, users)


def test_an_account_candidate_is_asked_for_an_email_too_prefilled(client, login_as, candidate, interviewer,
                                                                    decode_question):
    interview = services.interview_create(
        created_by=interviewer, title="Screen", questions=[decode_question.question],
        time_limit=make_interview(interviewer, decode_question).time_limit, hints_allowed=True,
        solutions_allowed=False, email_required=True,
    )
    candidate.email = "cand@example.org"
    candidate.save(update_fields=["email"])
    login_as(candidate)
    page = client.get(join_url(interview)).content.decode()
    assert 'id="id_name"' not in page and 'value="cand@example.org"' in page
    assert client.post(join_url(interview), {"email": "nope"}).status_code == 200
    assert client.post(join_url(interview), {"email": "cand@example.org"}).status_code == 302
    interview.refresh_from_db()
    assert interview.candidate_id == candidate.id and interview.candidate_email == "cand@example.org"


def test_a_name_is_kept_on_one_line(client, interview):
    guest_join(client, interview, name="  Grace \n\n Hopper\x07 ")
    interview.refresh_from_db()
    assert interview.candidate_display_name == "Grace Hopper"


# --- Where the name shows ----------------------------------------------------------------------

def answered_by_guest(client, interview, name):
    """The guest `name` joins, starts and answers once; the client is left logged in as them."""
    assert guest_join(client, interview, name=name).status_code == 302
    interview.refresh_from_db()
    client.post(reverse("interview-start", args=[interview.id]))
    interview.refresh_from_db()
    services.answer_submit(interview=interview, user=interview.candidate, question=interview.questions.get(),
                           part_id="floor", answer="1 ms")
    return interview


def test_a_hostile_name_is_shown_escaped_on_every_page(client, login_as, interview, interviewer):
    interview = answered_by_guest(client, interview, HOSTILE)
    guest_id = interview.candidate.username

    own_page = client.get(reverse("interview-room", args=[interview.id])).content.decode()
    assert f'<span class="who">{ESCAPED}</span>' in own_page  # the candidate's own navigation

    login_as(interviewer)
    pages = {
        "list": reverse("interview-list"),
        "monitor": reverse("interview-monitor", args=[interview.id]),
        "transcript": reverse("interview-transcript", args=[interview.id]),
        "scorecard": reverse("interview-scorecard", args=[interview.id]),
        "review": reverse("review"),
    }
    for page, url in pages.items():
        body = client.get(url).content.decode()
        assert ESCAPED in body, page
        assert HOSTILE not in body and guest_id not in body, page
    monitor = client.get(pages["monitor"]).content.decode()
    assert f'<span id="candidate-name">{ESCAPED} (guest)</span>' in monitor
    assert f"· {ESCAPED}</span>" in monitor  # the timeline names the actor too


def test_exports_carry_the_name_and_markdown_keeps_it_one_literal_line(client, login_as, interview, interviewer):
    interview = answered_by_guest(client, interview, MARKDOWN_BREAKER)
    guest_id = interview.candidate.username
    login_as(interviewer)

    markdown = client.get(reverse("interview-export", args=[interview.id, "md"])).content.decode()
    assert r"- Candidate: \`\`\` \# Hired (guest)" in markdown.splitlines()
    assert not [line for line in markdown.splitlines() if line.startswith(("```", "# Hired"))]
    assert r"(\`\`\` \# Hired)" in markdown  # the timeline's actor
    assert guest_id not in markdown

    exported = json.loads(client.get(reverse("interview-export", args=[interview.id, "json"])).content)
    assert exported["interview"]["candidate_name"] == "``` # Hired"
    assert {event["actor_name"] for event in exported["events"] if event["actor"] == guest_id} == {"``` # Hired"}


def test_an_account_candidate_is_named_by_full_name_else_username(interview, candidate):
    services.invite_accept(token=interview.invite_token, user=candidate)
    interview.refresh_from_db()
    assert interview.candidate_label == "cand"
    candidate.first_name, candidate.last_name = "Ada", "Lovelace"
    candidate.save(update_fields=["first_name", "last_name"])
    interview.refresh_from_db()
    assert interview.candidate_label == "Ada Lovelace"
    assert "- Candidate: Ada Lovelace" in transcript.export_markdown(interview)


def test_the_list_shows_names_without_a_query_per_interview(client, login_as, interviewer, decode_question,
                                                           django_assert_max_num_queries):
    for name in ("Grace", "Linus", "Ada"):
        services.invite_accept(token=make_interview(interviewer, decode_question).invite_token, guest_name=name)
    login_as(interviewer)
    with django_assert_max_num_queries(8):
        body = client.get(reverse("interview-list")).content.decode()
    assert re.findall(r'<td class="candidate">([^<]+)</td>', body) == ["Ada (guest)", "Linus (guest)",
                                                                       "Grace (guest)"]
