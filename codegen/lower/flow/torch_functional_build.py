"""Writes ``torch_functional_table.py``: which parameters the functions of ``torch.nn.functional`` write in place, and
when, read from the source of ``torch/nn/functional.py`` in the installed torch and from running it.

    python -m codegen.lower.flow.torch_functional_build          # rewrite the table from this torch
    python -m codegen.lower.flow.torch_functional_build --check  # exit 1 if the table differs

A function of the module is a Python body over ATen ops, and what it writes comes from two readings of the real
thing. Its body (``functional_body_writes.py``): ``F.embedding(ids, self.weight, max_norm=1.0)`` hands
``weight.detach()`` to ``torch.embedding_renorm_``, whose schema writes it, under ``if max_norm is not None:``.
Its run (``functional_probe.py``): ``F.batch_norm(h, rm, rv, training=True)`` calls ``torch.batch_norm``, which no
schema says writes, yet its kernel updates the running stats, and only when ``training`` is given. A parameter is
written where either reading says so; of two ways to need guards, the one needing fewer stands; a write both
readings find needs the guards of both (``F.dropout``'s body writes ``input`` under ``if inplace``, its runs only
where ``training`` is given too: ``input:inplace:training``). A function the build ran is listed in ``RAN``: it
writes what its row says, nothing without one (``F.gaussian_nll_loss`` clamps a copy of its ``var``, and writes
nothing); another writes every argument unless ATen's op of its name says otherwise. What a run hands back as it came
is ``PASSED``, and for the functions of ``torch`` whose ATen ops are composites, ``TORCH_PASSED`` (``aten_probe.py``:
``torch.dropout`` in eval). ``torch_functional.py`` reads the table;
``tests/flow/test_torch_children_functional.py`` rebuilds it from the pinned torch and compares.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from codegen.lower.flow.aten_probe import aten_passes
from codegen.lower.flow.functional_body_writes import (
    Written,
    body_writes,
    falsy_default,
    functional_sources,
    positional,
)
from codegen.lower.flow.functional_probe import probed
from codegen.lower.flow.table_files import table_main

__all__ = ["build", "main"]

TABLE = Path(__file__).with_name("torch_functional_table.py")
_HEADER = '''"""Which parameters the functions of ``torch.nn.functional`` write in place (written by
``torch_functional_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["FUNCTIONS", "PASSED", "RAN", "TORCH_PASSED"]

# function -> the parameters named here (``@``: the position, none by keyword only; ``=``: the default is None or
# False) | each parameter it writes in place, with ``:`` and the parameters that must be given (not None, not False)
FUNCTIONS: dict[str, str] = {
'''
_RAN = """
# the functions the build ran (``functional_probe.py``): each writes what its row says, and nothing without one
RAN: tuple[str, ...] = (
"""
_PASSED = """
# function -> its parameters it hands back as they came, unread (``F.dropout`` in eval): each with ``:`` and one
# parameter whose taking away (None, False, 0) does it, none where a run with every parameter given does
PASSED: dict[str, str] = {
"""
_TORCH_PASSED = """
# the same for the functions of ``torch`` whose ATen ops are composites returning a plain tensor (``aten_probe.py``):
# ``torch.dropout`` hands its input back where ``p`` is 0 or ``train`` off, though its schema makes a new tensor
TORCH_PASSED: dict[str, str] = {
"""


def build() -> str:
    """The table's text for the installed torch."""
    functions = functional_sources()
    runs = probed(functions)
    writes = {name: found[0] for name, found in runs.items()}
    written = {name: _kept(w) for name, w in _merged(_narrowed(body_writes(functions), writes), writes).items()}
    passes = {name: _kept(found[1]) for name, found in runs.items()}
    ran = "".join(f'    "{name}",\n' for name in sorted(runs))
    torch_passed = "".join(f'    "{n}": "{named} | {_writes_text(p)}",\n' for n, (named, p) in aten_passes().items())
    return (
        _HEADER
        + _rows(functions, written)
        + "}\n"
        + _RAN
        + ran
        + ")\n"
        + _PASSED
        + _rows(functions, passes)
        + "}\n"
        + _TORCH_PASSED
        + torch_passed
        + "}\n"
    )


def _rows(functions: dict[str, ast.FunctionDef], found: Written) -> str:
    """A row per public function with anything ``found``: the parameters it names, then what holds for each."""
    return "".join(
        f'    "{name}": "{_signature(functions[name], f)} | {_writes_text(f)}",\n'
        for name, f in sorted(found.items())
        if f and not name.startswith("_")
    )


def _merged(*readings: Written) -> Written:
    """Each parameter any reading finds written, with every set of guards found for it."""
    merged: Written = {}
    for reading in readings:
        for name, writes in reading.items():
            for param, alternatives in writes.items():
                merged.setdefault(name, {}).setdefault(param, set()).update(alternatives)
    return merged


def _narrowed(body: Written, runs: Written) -> Written:
    """The body's writes, each one a run also made narrowed by the guards the runs found: the body's ``if`` and the
    run's parameter are both needed (``F.dropout``'s ``_VF.dropout_(input, p, training)`` under ``if inplace``
    hands ``input`` back untouched where ``training`` is off: ``input:inplace:training``)."""
    return {
        name: {
            param: {g | r for g in guards for r in runs[name][param]} if param in runs.get(name, {}) else guards
            for param, guards in writes.items()
        }
        for name, writes in body.items()
    }


def _kept(written: dict[str, set[frozenset[str]]]) -> dict[str, set[frozenset[str]]]:
    """Each parameter's sets of guards but those holding whenever a smaller one does (``inplace`` covers ``inplace``
    with ``training``)."""
    return {param: {g for g in gs if not any(other < g for other in gs)} for param, gs in written.items()}


def _signature(fn: ast.FunctionDef, written: dict[str, set[frozenset[str]]]) -> str:
    """The parameters the writes name, each ``name@position`` (no position: by keyword only), ``=`` where its
    default is None or False."""
    named = sorted({*written, *(g for alternatives in written.values() for gs in alternatives for g in gs)})
    params = positional(fn)
    return " ".join(p + (f"@{params.index(p)}" if p in params else "") + "=" * falsy_default(fn, p) for p in named)


def _writes_text(written: dict[str, set[frozenset[str]]]) -> str:
    """``weight:max_norm``, ``input``."""
    items = [":".join([p, *sorted(guards)]) for p, alternatives in sorted(written.items()) for guards in alternatives]
    return " ".join(sorted(items))


def main(argv: list[str] | None = None) -> int:
    return table_main("codegen.lower.flow.torch_functional_build", TABLE, build, argv)


if __name__ == "__main__":
    sys.exit(main())
