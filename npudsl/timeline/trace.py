"""A :class:`~npudsl.timeline.simulate.Schedule` as a Chrome Trace Event file (Perfetto, chrome://tracing).

``{"traceEvents": [...]}`` with one process (the model) and one thread per
stream, named after it; each op a complete event (``"ph": "X"``, times in
microseconds); each side-stream function an enclosing event named after it; each
event edge a flow (``"s"`` on the recording stream, ``"f"`` on the waiting one),
bound to a zero-length ``record``/``wait`` slice so the viewers draw the arrow.
"""

from __future__ import annotations

import json
from typing import Any

from npudsl.timeline.simulate import Arrow, Schedule

__all__ = ["chrome_trace"]

_PID = 1


def _threads(schedule: Schedule, title: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": _PID, "args": {"name": title}}]
    for tid, stream in enumerate(schedule.streams, 1):
        events.append({"name": "thread_name", "ph": "M", "pid": _PID, "tid": tid, "args": {"name": stream}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": _PID, "tid": tid, "args": {"sort_index": tid}})
    return events


def _complete(name: str, category: str, tid: int, start: float, end: float) -> dict[str, Any]:
    return {"name": name, "cat": category, "ph": "X", "pid": _PID, "tid": tid, "ts": start, "dur": end - start}


def _flow(arrow: Arrow, number: int, tids: dict[str, int]) -> list[dict[str, Any]]:
    source, target = tids[arrow.source], tids[arrow.target]
    common = {"name": f"event {arrow.event}", "cat": "event", "pid": _PID, "id": number}
    return [
        _complete(f"record {arrow.event}", "event", source, arrow.at, arrow.at),
        {**common, "ph": "s", "tid": source, "ts": arrow.at},
        _complete(f"wait {arrow.event}", "event", target, arrow.until, arrow.until),
        {**common, "ph": "f", "bp": "e", "tid": target, "ts": arrow.until},
    ]


def chrome_trace(schedule: Schedule, *, title: str, note: str = "") -> str:
    """The trace as JSON text."""
    tids = {stream: tid for tid, stream in enumerate(schedule.streams, 1)}
    events = _threads(schedule, title)
    events += [_complete(r.label, "side-stream work", tids[r.stream], r.start, r.end) for r in schedule.regions]
    events += [_complete(s.label, "op", tids[s.stream], s.start, s.end) for s in schedule.slots]
    for number, arrow in enumerate((a for a in schedule.arrows if a.source != a.target), 1):
        events += _flow(arrow, number, tids)
    other = {
        "predicted_us": schedule.makespan,
        "one_stream_us": schedule.serial,
        "predicted_saving": round(schedule.saving, 6),
        "cost": note,
    }
    return json.dumps({"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}, indent=1) + "\n"
