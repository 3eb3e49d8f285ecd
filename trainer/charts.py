"""Geometry for the dashboard's server-side SVG charts (the template draws it)."""

from dataclasses import dataclass

from questions.labs.charts import PALETTE  # one palette for the site's charts, the labs' too


@dataclass(frozen=True)
class Bar:
    label: str
    value: float  # 0..1
    y: float
    width: float


def mastery_bars(mastery: list[tuple[str, str, float]], *, width: float = 360, row_height: float = 26) -> list[Bar]:
    return [Bar(label, value, index * row_height, max(0.0, min(1.0, value)) * width)
            for index, (_, label, value) in enumerate(mastery)]


@dataclass(frozen=True)
class Line:
    label: str
    color: str
    points: str  # "x,y x,y ..." for <polyline points>
    last: float


@dataclass(frozen=True)
class Tick:
    x: float
    label: str  # a date, "3 May"
    anchor: str  # SVG text-anchor, so the first and last labels stay inside the chart


@dataclass(frozen=True)
class HistoryChart:
    """What the "Last 30 days" card shows. `lines` is empty when nothing has any
    mastery yet; `days` counts the distinct days the history has points on: with fewer
    than two the lines are single points at the right edge, so the page says so instead
    of drawing bare axes (`drawable`)."""

    lines: list[Line]
    ticks: list[Tick]
    days: int
    width: float
    height: float

    @property
    def drawable(self) -> bool:
        return bool(self.lines) and self.days >= 2


def history_lines(history, topics: list[tuple[str, str]], *, start, end, width: float = 560,
                  height: float = 200) -> list[Line]:
    """One polyline per topic with any mastery in `history` ([(when, {topic: value})],
    ascending), x placed by time between `start` and `end`; y grows downwards in SVG."""
    span = max((end - start).total_seconds(), 1.0)
    xs = [max(0.0, (when - start).total_seconds()) / span * width for when, _ in history]
    lines = []
    for index, (key, label) in enumerate(topics):
        values = [values.get(key, 0.0) for _, values in history]
        if not any(values):
            continue
        points = " ".join(f"{x:.1f},{height - v * height:.1f}" for x, v in zip(xs, values))
        lines.append(Line(label, PALETTE[index % len(PALETTE)], points, values[-1]))
    return lines


def date_ticks(start, end, *, width: float = 560, count: int = 4) -> list[Tick]:
    """`count` evenly spaced date labels from `start` to `end` (both labelled)."""
    span = end - start
    ticks = []
    for index in range(count):
        fraction = index / (count - 1)
        when = start + span * fraction
        anchor = "start" if index == 0 else "end" if index == count - 1 else "middle"
        ticks.append(Tick(round(fraction * width, 1), f"{when.day} {when:%b}", anchor))
    return ticks


def history_chart(history, topics: list[tuple[str, str]], *, start, end, width: float = 560,
                  height: float = 200) -> HistoryChart:
    """The lines of `history_lines`, dated ticks for the x-axis, and how many days of
    history there are to draw."""
    return HistoryChart(
        lines=history_lines(history, topics, start=start, end=end, width=width, height=height),
        ticks=date_ticks(start, end, width=width),
        days=len({when.date() for when, _ in history}),
        width=width,
        height=height,
    )
