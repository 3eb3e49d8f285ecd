"""The near-miss check (questions.mutations) on small hand-made parts."""

from types import SimpleNamespace

from grading.kinds.base import ToleranceBand
from questions import mutations

DEFINITIONS = {"n": "4", "total": "big + small", "per_gpu": "total / n"}
CONTEXT = {"big": 100.0, "small": 1.0, "total": 101.0, "n": 4, "per_gpu": 25.25}
VARIANTS = [SimpleNamespace(context=CONTEXT, choices={"big": 100})]


def band(answer="total", rtol=0.03, mistakes=(), waivers=()):
    return ToleranceBand(answer=answer, rtol=rtol, atol_base=0.0, mistakes=tuple(mistakes),
                         waivers=tuple(waivers))


def messages(part_band):
    return [f.message for f in mutations.check_near_misses(0, "p", part_band, DEFINITIONS, VARIANTS)]


def test_a_dropped_term_inside_the_tolerance_is_reported_with_its_label():
    found = messages(band())
    assert any("near miss drop `small` from `total` gives 0.99% below" in m for m in found), found


def test_a_tight_tolerance_or_a_waiver_silences_it():
    assert not any("drop `small`" in m for m in messages(band(rtol=0.005)))
    assert not messages(band(waivers=[("drop `small`", "negligible here")]))


def test_a_waiver_that_matches_nothing_is_reported():
    assert any("waiver 'nothing' matches no near miss" in m
               for m in messages(band(waivers=[("drop `small`", "r"), ("nothing", "r")])))


def test_a_listed_mistake_inside_the_tolerance_is_reported():
    found = messages(band(rtol=0.005, mistakes=["big + small * 1.2"]))
    assert any("listed mistake mistakes[0]" in m for m in found), found


def test_a_count_left_out_of_a_product_and_an_off_by_one():
    labels = set()
    mutations.near_misses("per_gpu", DEFINITIONS, CONTEXT, rtol=1, atol_base=0, noise=0, labels=labels)
    assert "drop factor `n` from `per_gpu`" in labels  # the aggregate where one GPU's share was asked
    assert "`n` + 1 in `per_gpu`" in labels and "drop `small` from `total`" in labels
