"""Item statistics for question authors: a page of every part's numbers, suspect keys
first, and the same table as CSV (`?format=csv`)."""

import csv

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from questions.models import Topic
from questions.views import author_required
from trainer import item_stats
from trainer.spreadsheet import spreadsheet_cell

TEMPLATE = "trainer/item_stats.html"
CSV_COLUMNS = [
    "question", "title", "topic", "difficulty", "part", "kind", "practice_attempts", "interview_attempts",
    "candidates", "first_tries", "first_try_correct_share", "median_time_seconds", "hint_share", "suspect",
    "suspect_reasons", "top_wrong_answers",
]


def _filters(request) -> dict:
    """The page's filters from the query string; unknown values are ignored."""
    topic = request.GET.get("topic")
    sort = request.GET.get("sort")
    return {
        "topic": topic if topic in Topic.values else None,
        "sort": sort if sort in item_stats.SORTS else "question",
        "all_versions": request.GET.get("versions") == "all",
    }


def _rounded(share):
    return None if share is None else round(share, 3)


def _csv_record(stats: item_stats.PartStats) -> dict:
    return {
        "question": stats.question_slug, "title": stats.question_title, "topic": stats.topic,
        "difficulty": stats.difficulty, "part": stats.part_id, "kind": stats.part_kind,
        "practice_attempts": stats.attempts, "interview_attempts": stats.interview_attempts,
        "candidates": stats.candidates, "first_tries": stats.first_tries,
        "first_try_correct_share": _rounded(stats.first_try_correct_share),
        "median_time_seconds": stats.median_time_seconds,
        "hint_share": _rounded(stats.hint_share), "suspect": "yes" if stats.suspect else "no",
        "suspect_reasons": "; ".join(stats.suspect_reasons),
        "top_wrong_answers": " | ".join(wrong.label for wrong in stats.top_wrong),
    }


def _csv_response(parts) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    writer = csv.DictWriter(response, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    # Every text cell holds what candidates or authors typed: none may run as a formula.
    writer.writerows({column: spreadsheet_cell(value) for column, value in _csv_record(stats).items()}
                     for stats in parts)
    response["Content-Disposition"] = 'attachment; filename="item-statistics.csv"'
    return response


@require_GET
@author_required
@vary_on_headers("HX-Request")
def item_statistics(request):
    filters = _filters(request)
    parts = item_stats.item_stats(**filters)
    if request.GET.get("format") == "csv":
        return _csv_response(parts)
    context = {
        "parts": parts, "filters": filters, "topics": Topic.choices, "sorts": item_stats.SORTS,
        "suspect_count": sum(stats.suspect for stats in parts),
        "rule": {
            "cluster_min_candidates": item_stats.CLUSTER_MIN_CANDIDATES,
            "cluster_min_share": item_stats.CLUSTER_MIN_SHARE,
            "low_share_min_first_tries": item_stats.LOW_SHARE_MIN_FIRST_TRIES,
            "difficulty_floors": sorted(item_stats.DIFFICULTY_FLOORS.items()),
        },
    }
    template = f"{TEMPLATE}#results" if request.htmx else TEMPLATE
    return render(request, template, context)
