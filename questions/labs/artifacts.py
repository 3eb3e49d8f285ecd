"""The data a lab question carries: tables, traces, event logs and charts, as typed values.

A generator (`questions.labs.generator`) returns these; each knows its bytes
(`to_bytes()`, what the download link serves), its content type and its file name.
The bytes are a pure function of the fields: no clock, no dict order from a set, no
locale, so the same variant gives the same file byte for byte.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field

ARTIFACT_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # the file name's stem: [a-z0-9-]


class ArtifactError(ValueError):
    """An artifact a generator built wrongly (an author's problem, reported by validation)."""


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not ARTIFACT_NAME.match(name):
        raise ArtifactError(f"artifact name {name!r} must be lowercase words joined by '-'")


def _plain(value, where: str):
    """Cell and argument values: text, whole numbers, floats (written by repr) or None."""
    if value is None or isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return value
    raise ArtifactError(f"{where}: {type(value).__name__} value {value!r}; use text or a number")


@dataclass(frozen=True)
class TableArtifact:
    """Rows of values under named columns; served as CSV, shown as an HTML table."""

    name: str
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    title: str = ""

    kind = "table"
    extension = "csv"
    content_type = "text/csv; charset=utf-8"

    def __post_init__(self):
        _check_name(self.name)
        object.__setattr__(self, "columns", tuple(str(column) for column in self.columns))
        object.__setattr__(self, "rows", tuple(tuple(row) for row in self.rows))
        for index, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ArtifactError(f"{self.name}: row {index + 1} has {len(row)} values for "
                                    f"{len(self.columns)} columns")
            for value in row:
                _plain(value, f"{self.name} row {index + 1}")

    def to_bytes(self) -> bytes:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows(["" if value is None else value for value in row] for row in self.rows)
        return buffer.getvalue().encode("utf-8")


@dataclass(frozen=True)
class TraceEvent:
    """One complete span (`"ph": "X"`) of the Chrome trace-event format: `ts` and `dur`
    in microseconds, on the track `pid`/`tid`; `cat` and `args` are optional."""

    name: str
    ts: float
    dur: float
    pid: int
    tid: int
    cat: str = ""
    args: dict = field(default_factory=dict)

    @property
    def end(self) -> float:
        return self.ts + self.dur

    def to_json(self) -> dict:
        event = {"name": self.name, "ph": "X", "ts": self.ts, "dur": self.dur, "pid": self.pid, "tid": self.tid}
        if self.cat:
            event["cat"] = self.cat
        if self.args:
            event["args"] = {str(key): _plain(value, self.name) for key, value in self.args.items()}
        return event


@dataclass(frozen=True)
class Track:
    """A row of the timeline: one thread (`tid`) of one process (`pid`), with the names
    Perfetto and chrome://tracing show for them (written as `"ph": "M"` metadata events)."""

    pid: int
    tid: int
    process: str
    thread: str


@dataclass(frozen=True)
class TraceArtifact:
    """A timeline of spans; served as Chrome trace-event JSON (what PyTorch's profiler
    writes and Perfetto opens), shown as an SVG timeline of its tracks."""

    name: str
    events: tuple[TraceEvent, ...]
    tracks: tuple[Track, ...] = ()
    title: str = ""

    kind = "trace"
    extension = "json"
    content_type = "application/json"

    def __post_init__(self):
        _check_name(self.name)
        object.__setattr__(self, "events", tuple(self.events))
        object.__setattr__(self, "tracks", tuple(self.tracks))
        for event in self.events:
            if not isinstance(event, TraceEvent):
                raise ArtifactError(f"{self.name}: events must be TraceEvent values")
            if event.dur < 0:
                raise ArtifactError(f"{self.name}: span {event.name!r} has a negative duration")

    def track_list(self) -> tuple[Track, ...]:
        """Every track the events use, named ones first in their order, then the rest."""
        named = {(track.pid, track.tid): track for track in self.tracks}
        rows = list(self.tracks)
        for event in self.events:
            if (event.pid, event.tid) not in named:
                track = Track(event.pid, event.tid, f"pid {event.pid}", f"tid {event.tid}")
                named[(event.pid, event.tid)] = track
                rows.append(track)
        return tuple(rows)

    def to_json(self) -> dict:
        metadata = []
        processes_named = set()
        for track in self.tracks:
            if track.pid not in processes_named:
                processes_named.add(track.pid)
                metadata.append({"name": "process_name", "ph": "M", "pid": track.pid, "tid": 0,
                                 "args": {"name": track.process}})
            metadata.append({"name": "thread_name", "ph": "M", "pid": track.pid, "tid": track.tid,
                             "args": {"name": track.thread}})
        return {"traceEvents": metadata + [event.to_json() for event in self.events], "displayTimeUnit": "ms"}

    def to_bytes(self) -> bytes:
        return json.dumps(self.to_json(), separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True)
class EventLogArtifact:
    """Timestamped lines as an engine writes them; served and shown as plain text."""

    name: str
    lines: tuple[str, ...]
    title: str = ""

    kind = "log"
    extension = "log"
    content_type = "text/plain; charset=utf-8"

    def __post_init__(self):
        _check_name(self.name)
        object.__setattr__(self, "lines", tuple(self.lines))
        for line in self.lines:
            if not isinstance(line, str) or "\n" in line:
                raise ArtifactError(f"{self.name}: each line must be text without a line break")

    def to_bytes(self) -> bytes:
        return "".join(line + "\n" for line in self.lines).encode("utf-8")


CHART_STYLES = ("line", "scatter", "bar")


def _finite(value, where: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArtifactError(f"{where}: {type(value).__name__} value {value!r}; use a number")
    if not math.isfinite(value):
        raise ArtifactError(f"{where}: {value!r} is not a finite number")
    return value


@dataclass(frozen=True)
class Series:
    """One named run of (x, y) points of a chart; x ascending for a line."""

    label: str
    points: tuple[tuple[float, float], ...]

    def __post_init__(self):
        if not isinstance(self.label, str) or not self.label:
            raise ArtifactError(f"series label {self.label!r} must be non-empty text")
        points = []
        for index, point in enumerate(self.points):
            where = f"series {self.label!r} point {index + 1}"
            if isinstance(point, (str, bytes)) or len(point) != 2:
                raise ArtifactError(f"{where}: {point!r} must be an (x, y) pair")
            points.append((_finite(point[0], where), _finite(point[1], where)))
        if not points:
            raise ArtifactError(f"series {self.label!r} has no points")
        object.__setattr__(self, "points", tuple(points))


@dataclass(frozen=True)
class ChartArtifact:
    """Series of (x, y) points drawn as lines, scattered dots or bars; served as CSV in
    long form (`series,x,y`, one row per point), shown as an SVG chart. `x_label` and
    `y_label` name the axes with their units. A "bar" chart's x is a bin's left edge or
    a category index; every bar is as wide as the smallest spacing between xs."""

    name: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    style: str = "line"
    title: str = ""

    kind = "chart"
    extension = "csv"
    content_type = "text/csv; charset=utf-8"

    def __post_init__(self):
        _check_name(self.name)
        for axis in (self.x_label, self.y_label, self.title):
            if not isinstance(axis, str):
                raise ArtifactError(f"{self.name}: axis labels and the title must be text, not {axis!r}")
        if self.style not in CHART_STYLES:
            raise ArtifactError(f"{self.name}: style {self.style!r} is not one of {', '.join(CHART_STYLES)}")
        object.__setattr__(self, "series", tuple(self.series))
        if not self.series:
            raise ArtifactError(f"{self.name}: a chart needs at least one series")
        labels = set()
        for series in self.series:
            if not isinstance(series, Series):
                raise ArtifactError(f"{self.name}: series must be Series values, not {type(series).__name__}")
            if series.label in labels:
                raise ArtifactError(f"{self.name}: two series are called {series.label!r}")
            labels.add(series.label)
            xs = [x for x, _ in series.points]
            if self.style == "line" and any(later < earlier for earlier, later in zip(xs, xs[1:])):
                raise ArtifactError(f"{self.name}: series {series.label!r} is a line, so its x must ascend")
            if self.style == "bar" and len(set(xs)) != len(xs):
                raise ArtifactError(f"{self.name}: series {series.label!r} has two bars at one x")

    def to_bytes(self) -> bytes:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(("series", "x", "y"))
        writer.writerows((series.label, x, y) for series in self.series for x, y in series.points)
        return buffer.getvalue().encode("utf-8")


Artifact = TableArtifact | TraceArtifact | EventLogArtifact | ChartArtifact
ARTIFACT_TYPES = (TableArtifact, TraceArtifact, EventLogArtifact, ChartArtifact)


def filename(artifact: Artifact) -> str:
    return f"{artifact.name}.{artifact.extension}"
