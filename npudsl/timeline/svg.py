"""Render a :class:`~npudsl.timeline.simulate.Schedule` as a standalone SVG timeline (plain text, no dependencies)."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from npudsl.timeline.simulate import Schedule, Slot

__all__ = ["render"]

_LEFT, _WIDTH, _TOP, _LANE, _GAP = 110, 960, 78, 34, 12
_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#e15759", "#9c755f")


def _lane_y(index: int) -> float:
    return _TOP + index * (_LANE + _GAP)


def _slot(slot: Slot, y: float, scale: float, color: str, unit: str) -> str:
    x, width = _LEFT + slot.start * scale, max((slot.end - slot.start) * scale, 0.6)
    tip = escape(f"{slot.label}: {slot.end - slot.start:.4g} {unit} (starts at {slot.start:.4g})")
    text = ""
    if width > 7 * len(slot.label) + 4:
        text = (f'<text x="{x + width / 2:.1f}" y="{y + _LANE / 2 + 4:.1f}" text-anchor="middle" '
                f'font-size="11" fill="white">{escape(slot.label)}</text>')
    return (f'<g class="op"><title>{tip}</title><rect x="{x:.2f}" y="{y:.1f}" width="{width:.2f}" '
            f'height="{_LANE}" fill="{color}" stroke="white" stroke-width="0.5"/>{text}</g>')


def _lanes(schedule: Schedule, scale: float, unit: str) -> list[str]:
    parts = []
    for i, stream in enumerate(schedule.streams):
        y, color = _lane_y(i), _COLORS[i % len(_COLORS)]
        parts.append(f'<g class="lane" data-stream={quoteattr(stream)}>'
                     f'<rect x="{_LEFT}" y="{y:.1f}" width="{_WIDTH}" height="{_LANE}" fill="#f4f4f4"/>'
                     f'<text x="{_LEFT - 8}" y="{y + _LANE / 2 + 4:.1f}" text-anchor="end" font-size="12">'
                     f'{escape(stream)}</text>')
        parts += [_slot(s, y, scale, color, unit) for s in schedule.slots if s.stream == stream]
        parts.append("</g>")
    return parts


def _arrows(schedule: Schedule, scale: float) -> list[str]:
    lane = {stream: _lane_y(i) + _LANE / 2 for i, stream in enumerate(schedule.streams)}
    return [f'<g class="event"><title>{escape(a.event)}</title><line x1="{_LEFT + a.at * scale:.2f}" '
            f'y1="{lane[a.source]:.1f}" x2="{_LEFT + a.until * scale:.2f}" y2="{lane[a.target]:.1f}" '
            f'stroke="#c0392b" stroke-width="1.2" stroke-dasharray="4 2" marker-end="url(#arrow)"/></g>'
            for a in schedule.arrows if a.source != a.target]


def _serial_bar(schedule: Schedule, scale: float) -> str:
    y = _lane_y(len(schedule.streams)) + 6
    return (f'<g class="serial"><rect x="{_LEFT}" y="{y:.1f}" width="{schedule.serial * scale:.2f}" height="12" '
            f'fill="#bbbbbb"/><text x="{_LEFT - 8}" y="{y + 10:.1f}" text-anchor="end" font-size="11">'
            f'one stream</text></g>')


def render(schedule: Schedule, *, title: str, unit: str, note: str = "") -> str:
    """The SVG document: one lane per stream, event arrows, the one-stream bar and the predicted saving."""
    scale = _WIDTH / max(schedule.serial, schedule.makespan, 1e-12)
    height = _lane_y(len(schedule.streams)) + 40
    summary = (f"predicted: {schedule.makespan:.4g} {unit} on {len(schedule.streams)} streams vs "
               f"{schedule.serial:.4g} {unit} on one stream, saving {100 * schedule.saving:.1f}%")
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LEFT + _WIDTH + 20}" height="{height:.0f}" '
            f'font-family="sans-serif">',
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#c0392b"/></marker></defs>',
            '<rect width="100%" height="100%" fill="white"/>',
            f'<text x="10" y="24" font-size="15" font-weight="bold">{escape(title)}</text>',
            f'<text class="summary" x="10" y="46" font-size="12">{escape(summary)}</text>',
            f'<text x="10" y="64" font-size="11" fill="#555">{escape(note)}</text>']
    body = _lanes(schedule, scale, unit) + _arrows(schedule, scale) + [_serial_bar(schedule, scale)]
    return "\n".join([*head, *body, "</svg>"]) + "\n"
