"""The schedule picture: an example's captured graph as an SVG timeline, one lane per stream.

``python3 -m npudsl.timeline FILE [-o OUT.svg] [--model NAME] [--measured]``, or
:func:`picture` from Python. The example is transformed for the ``portable``
target in-process, its graph captured by ``torch.compile(fullgraph=True)`` with a
recording backend, every op placed on its stream (``torch.ops.npudsl.stream_enter``
/ ``stream_exit``), and a list-scheduling simulation (stream order, event waits)
predicts the time saved over one stream.
"""

from __future__ import annotations

import os

import attrs

from npudsl.errors import NpudslError
from npudsl.timeline.capture import capture_graph, load_example, pick_model, single_process_group
from npudsl.timeline.cost import flop_cost, measured_cost
from npudsl.timeline.simulate import Schedule, simulate
from npudsl.timeline.svg import render

__all__ = ["Picture", "picture"]

_MODEL = "cost model: matmul-like ops 2*m*n*k, views 0, other ops the largest element count of their tensors"
_MEASURED = "measured: each op's fastest eager time on this machine's CPU (where every stream runs serially)"


@attrs.frozen
class Picture:
    schedule: Schedule
    svg: str
    unit: str  # of the schedule's times: "units" (cost model) or "us" (measured)


def picture(path: str, *, model: str | None = None, measured: bool = False) -> Picture:
    """The timeline of ``path``'s model (see the module docstring); raises :class:`NpudslError` on bad input."""
    module = load_example(path)
    make_inputs = getattr(module, "example_inputs", None)
    if not callable(make_inputs):
        raise NpudslError(f"{path}: defines no example_inputs(); the picture needs inputs to capture a graph")
    instance = pick_model(module, model)
    with single_process_group(module):
        gm, inputs = capture_graph(instance, tuple(make_inputs()))
        cost, unit, note = (measured_cost(gm, inputs), "us", _MEASURED) if measured else (flop_cost, "units", _MODEL)
    schedule = simulate(gm.graph, cost)
    title = f"{os.path.basename(path)}: {type(instance).__name__}"
    return Picture(schedule=schedule, svg=render(schedule, title=title, unit=unit, note=note), unit=unit)
