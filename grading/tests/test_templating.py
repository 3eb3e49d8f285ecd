"""Templates: {{ expr | unit | format }}."""

import pytest

from grading.quantities import parse_quantity
from grading.templating import TemplateError, render_template

CONTEXT = {
    "floor": parse_quantity("140 GB") / parse_quantity("3.35 TB/s"),
    "batch": 8,
    "ratio": 0.4567,
    "gpu": {"name": "NVIDIA H100", "hbm_bandwidth": parse_quantity("3.35 TB/s")},
    "weights": parse_quantity("141.2e9 B"),
}


@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("{{ floor | ms }}", "41.8 ms"),
        ("{{floor|s}}", "0.0418 s"),
        ("{{ floor }}", "41.8 ms"),
        ("{{ floor | us | .4g }}", "4.179e+04 us"),
        ("{{ batch }}", "8"),
        ("{{ batch | | d }}", "8"),
        ("{{ ratio }}", "0.457"),
        ("{{ ratio | % }}", "45.7%"),
        ("{{ ratio | | .1f }}", "0.5"),
        ("{{ gpu.name }}", "NVIDIA H100"),
        ("{{ gpu.hbm_bandwidth }}", "3.35 TB/s"),
        ("{{ weights }}", "141 GB"),
        ("{{ weights | GiB | .1f }}", "131.5 GiB"),
        ("{{ 2 * batch }}", "16"),
    ],
)
def test_templates_render(template, text):
    assert render_template(template, CONTEXT) == text


def test_surrounding_text_and_several_templates():
    rendered = render_template("On {{ gpu.name }}, batch {{ batch }}: {{ floor | ms }}.",
                               CONTEXT)
    assert rendered == "On NVIDIA H100, batch 8: 41.8 ms."


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{{ floor | GB }}", "cannot be shown in GB"),
        ("{{ nothing }}", "unknown name"),
        ("{{ gpu.name | ms }}", "text cannot take a unit"),
        ("{{ batch | | !r }}", "unsupported number format"),
        ("{{ }}", "empty template"),
        ("{{ a | b | c | d }}", "at most"),
    ],
)
def test_template_errors_quote_the_template(template, message):
    with pytest.raises(TemplateError, match=message) as caught:
        render_template(template, CONTEXT)
    assert template.strip("{} ").split("|")[0].strip() in str(caught.value)
