"""Render a :class:`~npudsl.timeline.simulate.Schedule` as a standalone SVG timeline (plain text, no dependencies).

One lane per stream, each op a box (named where it fits, every box with a
tooltip), the work of each side-stream function bracketed and labelled above its
lane, event edges as dashed arrows, a time axis with units, a legend, and a bar
for the same ops on one stream.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape, quoteattr

from npudsl.timeline.simulate import Region, Schedule, Slot

__all__ = ["render", "time_unit"]

_LEFT, _WIDTH, _TOP, _LANE, _GAP = 120, 960, 92, 30, 26
_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#e15759", "#9c755f")
_UNITS = ((1e-3, "ns"), (1.0, "µs"), (1e3, "ms"), (1e6, "s"))  # (microseconds per unit, name)


def time_unit(span_us: float) -> tuple[float, str]:
    """(microseconds per unit, unit) so that ``span_us`` reads as a number of at least 1."""
    chosen = _UNITS[0]
    for per, name in _UNITS:
        if span_us >= per:
            chosen = (per, name)
    return chosen


def _lane_y(index: int) -> float:
    return _TOP + index * (_LANE + _GAP)


def _slot(slot: Slot, y: float, scale: float, color: str, unit: tuple[float, str]) -> str:
    x, width = _LEFT + slot.start * scale, max((slot.end - slot.start) * scale, 0.6)
    per, name = unit
    tip = escape(f"{slot.label}: {(slot.end - slot.start) / per:.3g} {name} (starts at {slot.start / per:.3g} {name})")
    text = ""
    if width > 7 * len(slot.label) + 4:
        text = (
            f'<text x="{x + width / 2:.1f}" y="{y + _LANE / 2 + 4:.1f}" text-anchor="middle" '
            f'font-size="11" fill="white">{escape(slot.label)}</text>'
        )
    return (
        f'<g class="op"><title>{tip}</title><rect x="{x:.2f}" y="{y:.1f}" width="{width:.2f}" '
        f'height="{_LANE}" fill="{color}" stroke="white" stroke-width="0.5"/>{text}</g>'
    )


def _region(region: Region, y: float, scale: float) -> str:
    x1, x2 = _LEFT + region.start * scale, _LEFT + max(region.end * scale, region.start * scale + 2)
    top = y - 4
    return (
        f'<g class="region"><title>{escape(region.label)}</title>'
        f'<path d="M {x1:.1f} {y:.1f} V {top:.1f} H {x2:.1f} V {y:.1f}" fill="none" stroke="#444"/>'
        f'<text x="{x1:.1f}" y="{top - 3:.1f}" font-size="11" fill="#222">{escape(region.label)}</text></g>'
    )


def _lanes(schedule: Schedule, scale: float, unit: tuple[float, str]) -> list[str]:
    parts = []
    for i, stream in enumerate(schedule.streams):
        y, color = _lane_y(i), _COLORS[i % len(_COLORS)]
        parts.append(
            f'<g class="lane" data-stream={quoteattr(stream)}>'
            f'<rect x="{_LEFT}" y="{y:.1f}" width="{_WIDTH}" height="{_LANE}" fill="#f4f4f4"/>'
            f'<text x="{_LEFT - 8}" y="{y + _LANE / 2 + 4:.1f}" text-anchor="end" font-size="12">'
            f"{escape(stream)}</text>"
        )
        parts += [_slot(s, y, scale, color, unit) for s in schedule.slots if s.stream == stream]
        parts += [_region(r, y, scale) for r in schedule.regions if r.stream == stream]
        parts.append("</g>")
    return parts


def _arrows(schedule: Schedule, scale: float) -> list[str]:
    lane = {stream: _lane_y(i) + _LANE / 2 for i, stream in enumerate(schedule.streams)}
    return [
        f'<g class="event"><title>event {escape(a.event)}: recorded on {escape(a.source)}, waited for on '
        f'{escape(a.target)}</title><line x1="{_LEFT + a.at * scale:.2f}" y1="{lane[a.source]:.1f}" '
        f'x2="{_LEFT + a.until * scale:.2f}" y2="{lane[a.target]:.1f}" stroke="#c0392b" stroke-width="1.2" '
        f'stroke-dasharray="4 2" marker-end="url(#arrow)"/></g>'
        for a in schedule.arrows
        if a.source != a.target
    ]


def _ticks(span: float, per: float) -> list[float]:
    """Tick positions in microseconds: steps of 1, 2 or 5 times a power of ten (in ``per`` units)."""
    raw = span / per / 8 if span > 0 else 1.0
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [k * step * per for k in range(int(span / per / step) + 1)]


def _axis(schedule: Schedule, scale: float, span: float, unit: tuple[float, str]) -> list[str]:
    y = _lane_y(len(schedule.streams)) + 30
    per, name = unit
    parts = [f'<g class="axis"><line x1="{_LEFT}" y1="{y}" x2="{_LEFT + _WIDTH}" y2="{y}" stroke="#333"/>']
    for tick in _ticks(span, per):
        x = _LEFT + tick * scale
        parts.append(
            f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 5}" stroke="#333"/>'
            f'<text x="{x:.1f}" y="{y + 17}" text-anchor="middle" font-size="10">{tick / per:g}</text>'
        )
    parts.append(f'<text x="{_LEFT - 8}" y="{y + 17}" text-anchor="end" font-size="11">time ({name})</text></g>')
    return parts


def _serial_bar(schedule: Schedule, scale: float) -> str:
    y = _lane_y(len(schedule.streams)) + 4
    return (
        f'<g class="serial"><rect x="{_LEFT}" y="{y:.1f}" width="{schedule.serial * scale:.2f}" height="12" '
        f'fill="#bbbbbb"/><text x="{_LEFT - 8}" y="{y + 10:.1f}" text-anchor="end" font-size="11">'
        f"one stream</text></g>"
    )


def _legend(y: float) -> str:
    x = _LEFT + _WIDTH - 330
    return (
        f'<g class="legend"><line x1="{x}" y1="{y}" x2="{x + 28}" y2="{y}" stroke="#c0392b" stroke-width="1.2" '
        f'stroke-dasharray="4 2" marker-end="url(#arrow)"/><text x="{x + 34}" y="{y + 4}" font-size="11">'
        f'event: recorded here, waited for there</text><rect x="{x + 250}" y="{y - 5}" width="18" height="10" '
        f'fill="#bbbbbb"/><text x="{x + 274}" y="{y + 4}" font-size="11">one stream</text></g>'
    )


def render(schedule: Schedule, *, title: str, note: str = "") -> str:
    """The SVG document: one lane per stream, event arrows, the one-stream bar, the axis and the saving."""
    span = max(schedule.serial, schedule.makespan, 1e-12)
    scale, unit = _WIDTH / span, time_unit(span)
    per, name = unit
    height = _lane_y(len(schedule.streams)) + 60
    summary = (
        f"predicted: {schedule.makespan / per:.4g} {name} on {len(schedule.streams)} streams vs "
        f"{schedule.serial / per:.4g} {name} on one stream, saving {100 * schedule.saving:.1f}%"
    )
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LEFT + _WIDTH + 20}" height="{height:.0f}" '
        f'font-family="sans-serif">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#c0392b"/></marker></defs>',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="10" y="24" font-size="15" font-weight="bold">{escape(title)}</text>',
        f'<text class="summary" x="10" y="44" font-size="12">{escape(summary)}</text>',
        f'<text x="10" y="62" font-size="11" fill="#555">{escape(note)}</text>',
        _legend(24),
    ]
    body = (
        _lanes(schedule, scale, unit)
        + _arrows(schedule, scale)
        + [_serial_bar(schedule, scale)]
        + _axis(schedule, scale, span, unit)
    )
    return "\n".join([*head, *body, "</svg>"]) + "\n"
