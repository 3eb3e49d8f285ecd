"""Every lab question in the bank, opened as a candidate would open it: its page shows
its tables and at least one picture (a trace timeline or a chart), and every download
link on it returns that artifact's data for the candidate's variant."""

import re

import pytest
from django.urls import reverse

from questions.loader import bank_files, load_file
from questions.tests.factories import store_version
from trainer import selectors

LABS = [path for path in bank_files() if load_file(path).data and load_file(path).data.get("generator")]
DOWNLOAD = re.compile(r'<a class="artifact-download" href="([^"]+)" download="([^"]+)"')


def test_the_bank_has_the_eight_labs_of_issue_16():
    seeds = {load_file(path).data["seed"] for path in LABS}
    assert {36, 91, 103, 114, 115, 116, 117, 118} <= seeds


@pytest.mark.django_db
@pytest.mark.parametrize("path", LABS, ids=lambda path: path.stem)
def test_a_lab_page_shows_tables_and_a_picture_and_serves_each_download(path, login_as, candidate):
    data = load_file(path).data
    version = store_version(data)
    client = login_as(candidate)
    page = client.get(reverse("question-detail", args=[data["slug"]])).content.decode()
    seed = client.session[f"variant:{data['slug']}"]
    expected = {artifact.filename: artifact for artifact in selectors.rendered_question(version, seed).artifacts}
    assert expected, "a lab question must carry artifacts"
    kinds = {artifact.kind for artifact in expected.values()}
    assert page.count('<table class="sortable"') == sum(1 for a in expected.values() if a.kind == "table")
    assert "trace" in kinds or "chart" in kinds, "a lab must show at least one picture"
    assert page.count('<svg class="trace-timeline"') + page.count('<svg class="lab-chart"') >= 1
    links = {name: href for href, name in DOWNLOAD.findall(page)}
    assert set(links) == set(expected)
    for name, href in links.items():
        response = client.get(href)
        assert response.status_code == 200, name
        assert response.content == expected[name].data, name
