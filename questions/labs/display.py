"""Artifacts shown the way people read them: a table as an HTML table, a trace as an
SVG timeline of its tracks (one row per pid/tid, one rect per span, a time axis), an
event log as preformatted text, a chart as an SVG chart (`questions.labs.charts`).

The markup is built here, server-side, with every value escaped, and uses classes only
(the pages' Content-Security-Policy allows no inline style or script); the colours and
the scrolling box live in static/trainer/app.css.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from questions.labs.artifacts import (
    Artifact,
    ChartArtifact,
    EventLogArtifact,
    TableArtifact,
    TraceArtifact,
    filename,
)
from questions.labs.charts import chart_svg, nice_step

SPAN_COLOURS = 8  # span-c0 .. span-c7 in app.css; a span name keeps its colour on every row
LABEL_WIDTH = 190
PLOT_WIDTH = 760
ROW_HEIGHT = 22
AXIS_HEIGHT = 26
CHAR_WIDTH = 6.2  # of the 11px label font, to decide whether a name fits inside its rect


@dataclass(frozen=True)
class RenderedArtifact:
    """One artifact as the question page shows it: `html` is safe markup."""

    name: str
    filename: str
    title: str
    kind: str
    content_type: str
    html: str
    data: bytes = field(repr=False)

    @property
    def size(self) -> int:
        return len(self.data)


def render_artifact(artifact: Artifact) -> RenderedArtifact:
    if isinstance(artifact, TableArtifact):
        markup = table_html(artifact)
    elif isinstance(artifact, TraceArtifact):
        markup = trace_svg(artifact)
    elif isinstance(artifact, EventLogArtifact):
        markup = log_html(artifact)
    elif isinstance(artifact, ChartArtifact):
        markup = chart_svg(artifact)
    else:
        raise TypeError(f"not an artifact: {artifact!r}")
    return RenderedArtifact(
        name=artifact.name, filename=filename(artifact), title=artifact.title or filename(artifact),
        kind=artifact.kind, content_type=artifact.content_type, html=markup, data=artifact.to_bytes(),
    )


def _cell(value) -> str:
    if value is None:
        return '<td class="empty"></td>'
    if isinstance(value, (int, float)):
        return f'<td class="num">{escape(str(value))}</td>'
    return f"<td>{escape(value)}</td>"


def table_html(table: TableArtifact) -> str:
    """The table in a box that scrolls when long (its header stays in view). Each header
    is a `<button>` in its `<th>` for static/trainer/artifacts.js, which sorts the rows
    by that column on a click, or on Enter or Space, and sets the `<th>`'s `aria-sort`."""
    head = "".join(f'<th scope="col" data-sort="{index}"><button type="button" class="sort-button">'
                   f"{escape(column)}</button></th>" for index, column in enumerate(table.columns))
    body = "".join("<tr>" + "".join(_cell(value) for value in row) + "</tr>" for row in table.rows)
    return (f'<div class="artifact-table" tabindex="0" role="region" aria-label="{escape(table.title or table.name)}">'
            f'<table class="sortable" data-artifact="{escape(table.name)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


def log_html(log: EventLogArtifact) -> str:
    return f'<pre class="artifact-log">{escape(chr(10).join(log.lines))}</pre>'


def _ms(microseconds: float) -> str:
    return f"{microseconds / 1000:.3f}".rstrip("0").rstrip(".") + " ms"


def trace_svg(trace: TraceArtifact) -> str:
    """A timeline: one row per track (pid/tid, labelled with its process and thread),
    one `rect.span` per span with a `<title>` giving its name, start and duration, and
    a time axis in milliseconds from the first span's start."""
    tracks = trace.track_list()
    rows = {(track.pid, track.tid): index for index, track in enumerate(tracks)}
    events = trace.events
    start = min((event.ts for event in events), default=0)
    end = max((event.end for event in events), default=start + 1)
    duration = max(end - start, 1)
    scale = PLOT_WIDTH / duration
    colours = {name: index % SPAN_COLOURS for index, name in enumerate(sorted({event.name for event in events}))}
    height = AXIS_HEIGHT + ROW_HEIGHT * len(tracks) + 4
    width = LABEL_WIDTH + PLOT_WIDTH + 10
    out = [f'<svg class="trace-timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
           f'role="img" aria-label="{escape(trace.title or trace.name)}: timeline of {len(events)} spans">']
    step = nice_step(duration)
    tick = 0.0
    while tick <= duration + 1e-9:
        x = LABEL_WIDTH + tick * scale
        out.append(f'<line class="tick" x1="{x:.1f}" y1="{AXIS_HEIGHT - 6}" x2="{x:.1f}" y2="{height}"/>')
        out.append(f'<text class="tick-label" x="{x:.1f}" y="{AXIS_HEIGHT - 10}">{escape(_ms(tick))}</text>')
        tick += step
    for index, track in enumerate(tracks):
        y = AXIS_HEIGHT + index * ROW_HEIGHT
        out.append(f'<line class="lane" x1="0" y1="{y}" x2="{width}" y2="{y}"/>')
        label = f"{track.process} · {track.thread}"
        out.append(f'<text class="track-label" x="4" y="{y + 15}">{escape(label)}</text>')
    for event in events:
        x = LABEL_WIDTH + (event.ts - start) * scale
        y = AXIS_HEIGHT + rows[(event.pid, event.tid)] * ROW_HEIGHT + 3
        rect_width = max(event.dur * scale, 0.6)
        tip = f"{event.name}: {_ms(event.dur)}, from {_ms(event.ts - start)} to {_ms(event.end - start)}"
        out.append(f'<rect class="span span-c{colours[event.name]}" x="{x:.2f}" y="{y}" width="{rect_width:.2f}" '
                   f'height="{ROW_HEIGHT - 6}"><title>{escape(tip)}</title></rect>')
        if rect_width > CHAR_WIDTH * len(event.name) + 6:
            out.append(f'<text class="span-label" x="{x + 3:.2f}" y="{y + 12}">{escape(event.name)}</text>')
    out.append("</svg>")
    return "".join(out)
