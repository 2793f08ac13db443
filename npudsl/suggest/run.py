"""Run every stage on one model file: :func:`suggest`."""

from __future__ import annotations

import os

import attrs
import libcst as cst

from npudsl.suggest.apply import Edit, apply_edits
from npudsl.suggest.blocks import Source
from npudsl.suggest.dag import Unit, analyze
from npudsl.suggest.hoist import options
from npudsl.suggest.mapping import edits, mappable
from npudsl.suggest.plan import SYNC_COST, Plan, choose
from npudsl.suggest.split import Splits, split_calls
from npudsl.suggest.units import SourceDefs, call_units, compute_nodes
from npudsl.timeline.cost import NOMINAL, Hardware

__all__ = ["Suggestion", "suggest"]


@attrs.frozen(kw_only=True)
class Suggestion:
    path: str
    model: str  # the model class's name
    plan: Plan
    units: tuple[Unit, ...]
    edit: Edit
    source: str
    proposed: str  # the source with the decorators; equal to ``source`` when nothing is worth moving
    note: str  # how op times were found
    splits: Splits  # the analysed source: the file with buried calls split out; its line numbers are the sites'
    declined: tuple[str, ...] = ()  # per call statement not moved up for a reason: what stopped it

    @property
    def changed(self) -> bool:
        return self.proposed != self.source

    def line(self, line: int) -> int:
        """The file's line for a site's or a hoist's ``line``."""
        return self.splits.original(line)


def _capture(path: str, source: str, model: str | None, inputs: str | None, measured: bool, hardware: Hardware):
    from npudsl.timeline.capture import capture_graph, load_example, pick_model, resolve_inputs, single_process_group
    from npudsl.timeline.cost import measured_cost, model_cost

    module = load_example(path, source=source)
    make_inputs = resolve_inputs(module, path, inputs)
    if model is None and isinstance(getattr(module, "Model", None), type):
        model = "Model"  # the default order: --model, else Model, else the last nn.Module class
    instance = pick_model(module, model)
    with single_process_group(module):
        gm, example = capture_graph(instance, tuple(make_inputs()), path=path)
        if measured:
            return instance, gm, measured_cost(gm, example), "measured: each op's fastest eager time on this CPU"
    return instance, gm, model_cost(hardware), hardware.describe()


def suggest(
    path: str,
    *,
    model: str | None = None,
    inputs: str | None = None,
    streams: int = 1,
    sync_cost: float = SYNC_COST,
    measured: bool = False,
    hardware: Hardware = NOMINAL,
) -> Suggestion:
    """The decorators worth adding to ``path``'s model; raises :class:`~npudsl.errors.NpudslError` on bad input."""
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    splits = split_calls(source)
    split = splits.source
    instance, gm, cost, note = _capture(path, split, model, inputs, measured, hardware)
    nodes = compute_nodes(gm.graph)
    defs = SourceDefs.read(path, split)
    units = mappable(analyze(call_units(nodes, defs), nodes, cost, defs), cst.parse_module(split))
    facts = Source.parse(split)
    declined: list[str] = []
    plan = choose(
        units,
        nodes,
        cost,
        streams=streams,
        sync_cost=sync_cost,
        hoists=lambda sites: options(sites, nodes, defs, facts, declined),
    )
    edit = edits(plan.moves, units, defs)
    proposed = splits.undo(apply_edits(split, edit), {move.site.line for move in plan.moves if move.hoist})
    return Suggestion(
        path=os.fspath(path),
        model=type(instance).__name__,
        plan=plan,
        units=tuple(units),
        edit=edit,
        source=source,
        proposed=proposed,
        note=note,
        splits=splits,
        declined=tuple(dict.fromkeys(declined)),
    )
