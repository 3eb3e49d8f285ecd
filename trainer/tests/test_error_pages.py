"""403, 404 and 500 pages wear the site's layout when DEBUG is off; the 500 page renders
with the empty context Django gives it (no request, no user, no database)."""

import pytest
from django.template import loader
from django.urls import path, reverse

from trainer import urls as site_urls


def _boom(request):
    raise RuntimeError("a bug in a view")


urlpatterns = [*site_urls.urlpatterns, path("boom/", _boom)]


@pytest.fixture
def no_debug(settings):
    settings.DEBUG = False
    return settings


def _in_layout(body: str) -> bool:
    return 'class="topbar"' in body and "trainer/app.css" in body


def test_a_missing_page_is_the_sites_404(client, login_as, candidate, no_debug):
    login_as(candidate)
    response = client.get("/questions/no-such-question-anywhere/")
    body = response.content.decode()
    assert response.status_code == 404
    assert _in_layout(body) and 'id="error-404"' in body
    assert "Log out" in body  # the signed-in header, from the request's context


def test_a_refused_page_is_the_sites_403(client, login_as, candidate, no_debug):
    login_as(candidate)
    response = client.get(reverse("review"))  # interviewers only
    body = response.content.decode()
    assert response.status_code == 403
    assert _in_layout(body) and 'id="error-403"' in body


@pytest.mark.urls(__name__)
def test_a_crashing_view_is_the_sites_500(client, login_as, candidate, no_debug):
    login_as(candidate)
    client.raise_request_exception = False
    response = client.get("/boom/")
    body = response.content.decode()
    assert response.status_code == 500
    assert _in_layout(body) and 'id="error-500"' in body


def test_the_500_page_renders_with_an_empty_context_and_no_database():
    # No `db` fixture: pytest-django refuses any query, so one would fail this test.
    body = loader.get_template("500.html").render()
    assert _in_layout(body) and 'id="error-500"' in body
    assert "Log in" in body and "Log out" not in body
