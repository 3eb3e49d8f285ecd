"""The dashboard's chart geometry: dated x-axis ticks, and a history too short to draw."""

from datetime import UTC, datetime, timedelta

from trainer import charts

TOPICS = [("roofline", "Roofline and hardware"), ("kv-cache", "KV cache and memory")]
END = datetime(2025, 6, 30, 15, 0, tzinfo=UTC)
START = END - timedelta(days=30)


def test_ticks_label_the_first_and_last_day_and_stay_inside_the_axis():
    ticks = charts.date_ticks(START, END, width=560)
    assert [tick.label for tick in ticks] == ["31 May", "10 Jun", "20 Jun", "30 Jun"]
    assert [tick.x for tick in ticks] == [0.0, 186.7, 373.3, 560.0]
    assert [tick.anchor for tick in ticks] == ["start", "middle", "middle", "end"]


def test_one_day_of_history_is_not_drawable():
    # What one answer today gives: today's snapshot, then "now", on the same day.
    history = [(END - timedelta(hours=2), {"roofline": 0.5}), (END, {"roofline": 0.5})]
    chart = charts.history_chart(history, TOPICS, start=START, end=END)
    assert chart.days == 1 and [line.label for line in chart.lines] == ["Roofline and hardware"]
    assert not chart.drawable


def test_two_days_of_history_draw_one_line_per_topic_with_mastery():
    history = [(END - timedelta(days=15), {"roofline": 1.0}), (END, {"roofline": 0.5})]
    chart = charts.history_chart(history, TOPICS, start=START, end=END)
    assert chart.drawable and chart.days == 2
    (line,) = chart.lines
    assert line.points == "280.0,0.0 560.0,100.0"
    assert line.last == 0.5


def test_no_mastery_draws_nothing():
    chart = charts.history_chart([(END, {})], TOPICS, start=START, end=END)
    assert chart.lines == [] and not chart.drawable
