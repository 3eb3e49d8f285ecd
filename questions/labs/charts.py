"""A `ChartArtifact` drawn server-side as SVG: axes with nice ticks and their labels,
one colour per series from `PALETTE`, a legend when there are two or more series, and
a `<title>` on every point or bar so hovering names its values.

Colours are SVG presentation attributes (`fill`, `stroke`), which the pages'
Content-Security-Policy allows, unlike inline `style`; text and grid colours are
classes in static/trainer/app.css.
"""

from __future__ import annotations

import math
from html import escape

from questions.labs.artifacts import ChartArtifact, Series

# One palette for every chart on the site (the dashboard's too, which imports it: the
# pages may import the bank, the bank may not import the pages).
PALETTE = ["#2457c5", "#d9480f", "#2b8a3e", "#862e9c", "#c92a2a", "#0b7285",
           "#e67700", "#5c940d", "#364fc7", "#a61e4d", "#495057"]

WIDTH = 720
PLOT_HEIGHT = 260
LEFT = 76  # room for the y tick labels and the rotated y label
RIGHT = 18
TOP = 12
BOTTOM = 46  # the x tick labels and the x label
LEGEND_ROW = 18
CHAR_WIDTH = 6.2  # of the 11px font, to lay the legend out
STYLE_NOUNS = {"line": "line chart", "scatter": "scatter plot", "bar": "bar chart"}


def nice_step(span: float, ticks: int = 6) -> float:
    """A 1, 2 or 5 times a power of ten giving about `ticks` intervals over `span` (> 0)."""
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 5, 10):
        if raw <= multiple * power:
            return multiple * power
    return 10 * power


def nice_axis(low: float, high: float, *, include_zero: bool = False) -> tuple[float, float, float]:
    """(start, end, step): the range [low, high] widened to whole nice steps, so the
    first and last ticks sit on the plot's edges. A flat range gets some room around it."""
    if include_zero:
        low, high = min(low, 0.0), max(high, 0.0)
    if high == low:
        pad = abs(low) * 0.1 or 1.0
        low, high = low - pad, high + pad
    step = nice_step(high - low)
    # The epsilon keeps 0.3 / 0.1 = 2.9999... on its tick instead of one step further out.
    start = math.floor(low / step + 1e-9) * step
    end = math.ceil(high / step - 1e-9) * step
    digits = 9 - math.floor(math.log10(step))  # drop the float noise of the product (5.6000000000000005)
    return round(start, digits), round(end, digits), step


def tick_values(start: float, end: float, step: float) -> list[float]:
    count = round((end - start) / step)
    return [0.0 if abs(start + index * step) < step * 1e-6 else start + index * step for index in range(count + 1)]


def tick_label(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    return f"{value:,.{decimals}f}"


def number_text(value: float) -> str:
    """A point's value for its hover title: short, with no exponent for everyday sizes."""
    if isinstance(value, int):
        return str(value)
    text = f"{value:.6g}"
    if "e" in text and abs(value) >= 1:
        text = f"{value:.0f}"
    return text


def bar_width(chart: ChartArtifact) -> float:
    """The smallest spacing between distinct xs of all series; 1 when there is one x."""
    xs = sorted({x for series in chart.series for x, _ in series.points})
    gaps = [later - earlier for earlier, later in zip(xs, xs[1:])]
    return min(gaps) if gaps else 1.0


def _legend_rows(series: tuple[Series, ...]) -> list[list[tuple[float, int, Series]]]:
    """Legend entries as (x, colour index, series), wrapped into rows of the plot's width."""
    rows: list[list[tuple[float, int, Series]]] = [[]]
    x = LEFT
    for index, one in enumerate(series):
        entry_width = 18 + CHAR_WIDTH * len(one.label) + 14
        if rows[-1] and x + entry_width > WIDTH - RIGHT:
            rows.append([])
            x = LEFT
        rows[-1].append((x, index, one))
        x += entry_width
    return rows


def _summary(chart: ChartArtifact) -> str:
    points = [point for series in chart.series for point in series.points]
    ys = [y for _, y in points]
    labels = ", ".join(series.label for series in chart.series)
    return (f"{chart.title or chart.name}: {STYLE_NOUNS[chart.style]} of {chart.y_label} against {chart.x_label}; "
            f"{len(chart.series)} series ({labels}), {len(points)} points, {chart.y_label} from "
            f"{number_text(min(ys))} to {number_text(max(ys))}")


def chart_svg(chart: ChartArtifact) -> str:
    """The chart as one `<svg role="img">` whose `aria-label` summarises it."""
    points = [point for series in chart.series for point in series.points]
    width_of_bar = bar_width(chart) if chart.style == "bar" else 0.0
    x_start, x_end, x_step = nice_axis(min(x for x, _ in points), max(x for x, _ in points) + width_of_bar)
    y_start, y_end, y_step = nice_axis(min(y for _, y in points), max(y for _, y in points),
                                       include_zero=chart.style == "bar")
    legend = _legend_rows(chart.series) if len(chart.series) > 1 else []
    top = TOP + LEGEND_ROW * len(legend)
    plot_width = WIDTH - LEFT - RIGHT
    height = top + PLOT_HEIGHT + BOTTOM

    def px(x: float) -> float:
        return LEFT + (x - x_start) / (x_end - x_start) * plot_width

    def py(y: float) -> float:
        return top + PLOT_HEIGHT - (y - y_start) / (y_end - y_start) * PLOT_HEIGHT

    out = [f'<svg class="lab-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
           f'role="img" aria-label="{escape(_summary(chart))}">']
    for row_index, row in enumerate(legend):
        y = TOP + row_index * LEGEND_ROW
        for x, colour, series in row:
            out.append(f'<rect class="legend-swatch" x="{x}" y="{y}" width="12" height="12" '
                       f'fill="{PALETTE[colour % len(PALETTE)]}"/>')
            out.append(f'<text class="legend-label" x="{x + 18}" y="{y + 10}">{escape(series.label)}</text>')
    bottom = top + PLOT_HEIGHT
    for value in tick_values(y_start, y_end, y_step):
        y = py(value)
        out.append(f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}"/>')
        out.append(f'<text class="tick-label" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
                   f"{tick_label(value, y_step)}</text>")
    for value in tick_values(x_start, x_end, x_step):
        x = px(value)
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}"/>')
        out.append(f'<text class="tick-label" x="{x:.1f}" y="{bottom + 15}" text-anchor="middle">'
                   f"{tick_label(value, x_step)}</text>")
    out.append(f'<line class="axis" x1="{LEFT}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}"/>')
    out.append(f'<line class="axis" x1="{LEFT}" y1="{top}" x2="{LEFT}" y2="{bottom}"/>')
    out.append(f'<text class="axis-label" x="{LEFT + plot_width / 2:.1f}" y="{height - 8}" '
               f'text-anchor="middle">{escape(chart.x_label)}</text>')
    y_middle = top + PLOT_HEIGHT / 2
    out.append(f'<text class="axis-label" x="14" y="{y_middle:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 14 {y_middle:.1f})">{escape(chart.y_label)}</text>')
    for index, series in enumerate(chart.series):
        colour = PALETTE[index % len(PALETTE)]
        if chart.style == "bar":
            out.extend(_bars(chart, series, index, colour, width_of_bar, px, py))
        else:
            out.extend(_points(chart, series, colour, px, py))
    out.append("</svg>")
    return "".join(out)


def _tip(chart: ChartArtifact, series: Series, x: float, y: float) -> str:
    return escape(f"{series.label}: {chart.x_label} = {number_text(x)}, {chart.y_label} = {number_text(y)}")


def _points(chart, series, colour, px, py) -> list[str]:
    out = []
    if chart.style == "line":
        coordinates = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in series.points)
        out.append(f'<polyline class="chart-line" fill="none" stroke="{colour}" stroke-width="2" '
                   f'points="{coordinates}"/>')
    radius = 2.5 if chart.style == "line" else 3.5
    for x, y in series.points:
        out.append(f'<circle class="chart-point" cx="{px(x):.1f}" cy="{py(y):.1f}" r="{radius}" fill="{colour}">'
                   f"<title>{_tip(chart, series, x, y)}</title></circle>")
    return out


def _bars(chart, series, index, colour, width_of_bar, px, py) -> list[str]:
    """Bars side by side within each x's width, one slot per series, from y = 0."""
    slot = width_of_bar / len(chart.series)
    out = []
    for x, y in series.points:
        left = px(x + index * slot)
        bar_pixels = max(px(x + (index + 1) * slot) - left - 1, 1.0)
        upper, lower = py(max(y, 0.0)), py(min(y, 0.0))
        out.append(f'<rect class="chart-bar" x="{left:.1f}" y="{upper:.1f}" width="{bar_pixels:.1f}" '
                   f'height="{max(lower - upper, 0.5):.1f}" fill="{colour}">'
                   f"<title>{_tip(chart, series, x, y)}</title></rect>")
    return out
