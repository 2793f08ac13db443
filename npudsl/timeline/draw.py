"""Capture a model file's graph and draw it: :func:`picture`."""

from __future__ import annotations

import os

import attrs

from npudsl.timeline.capture import capture_graph, load_example, pick_model, resolve_inputs, single_process_group
from npudsl.timeline.cost import NOMINAL, Hardware, measured_cost, model_cost
from npudsl.timeline.simulate import Schedule, simulate
from npudsl.timeline.svg import render
from npudsl.timeline.trace import chrome_trace

__all__ = ["Picture", "picture"]

_MEASURED = "measured: each op's fastest eager time on this machine's CPU (where every stream runs serially)"


@attrs.frozen
class Picture:
    schedule: Schedule  # times in microseconds
    svg: str
    trace: str  # Chrome Trace Event JSON
    title: str


def picture(
    path: str,
    *,
    model: str | None = None,
    inputs: str | None = None,
    measured: bool = False,
    hardware: Hardware = NOMINAL,
) -> Picture:
    """The timeline of ``path``'s model; raises :class:`~npudsl.errors.NpudslError` on bad input.

    ``inputs`` names the function that makes the model's inputs: a name in ``path``
    (default ``example_inputs``), ``other.py:NAME`` or ``package.module:NAME``.
    """
    module = load_example(path)
    make_inputs = resolve_inputs(module, path, inputs)
    instance = pick_model(module, model)
    with single_process_group(module):
        gm, example = capture_graph(instance, tuple(make_inputs()), path=path)
        cost, note = (
            (measured_cost(gm, example), _MEASURED) if measured else (model_cost(hardware), hardware.describe())
        )
    schedule = simulate(gm.graph, cost)
    title = f"{os.path.basename(path)}: {type(instance).__name__}"
    return Picture(
        schedule=schedule,
        svg=render(schedule, title=title, note=note),
        trace=chrome_trace(schedule, title=title, note=note),
        title=title,
    )
