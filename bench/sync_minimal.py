"""Sync calls per forward: the generated code of every target against a minimal hand-written schedule.

    .venv/bin/python -m bench.sync_minimal [--json | --markdown] [--only NAME ...] [--graph-inputs]

For every example and corpus entry (:mod:`bench.sync_sources`), each target's
generated code is captured whole on the CPU under the stand-ins and its switches,
records, waits and ``record_stream`` calls counted (:mod:`bench.sync_count`). Its
hand-written version (``bench/hand_written/<name>.py``, written with
``npudsl.runtime``) is captured with the race checker, compared with the reference
numerics, and each of its sync calls dropped in turn to show none can go
(:mod:`bench.sync_proof`); its count per target follows by rule
(:mod:`bench.sync_rules`), except GE's where the row has a GE hand version of the
GE schedule (``<name>_ge.py``, proven by :mod:`bench.sync_ge_proof`). One row per example/entry; per target
``generated/hand ratio``. Goal: a ratio <= 1.00 everywhere (issue 26).

Every model is called from a caller that makes its tensor inputs right before the
call (:mod:`bench.sync_premise`), so a module stays safe whatever its caller
(CONTRACT section 2); ``--graph-inputs`` compiles each alone, as the first table did.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python3 bench/<name>.py`

from bench.sync_count import total  # noqa: E402
from bench.sync_hand import Proof, prove  # noqa: E402
from bench.sync_sources import TARGETS, Row, rows  # noqa: E402
from npudsl.errors import StreamRaceError  # noqa: E402

__all__ = ["main", "measure", "table"]


def _hand(row: Row) -> tuple[Proof | None, dict[str, Any] | None]:
    """The proof of the row's hand version and its summary (``None``: no hand version)."""
    try:
        proof = prove(row)
    except StreamRaceError as error:  # the hand version itself races: say so, the table goes on
        return None, {"equal": False, "calls": 0, "droppable": [f"the hand version races: {error}".splitlines()[0]]}
    if proof is None:
        return None, None
    summary = {
        "equal": proof.equal,
        "calls": len(proof.drops) - (proof.ge_calls or 0),
        "droppable": [f"{d.call}: {d.why}" for d in proof.droppable],
    }
    return proof, summary if proof.ge_calls is None else {**summary, "ge_calls": proof.ge_calls}


def _target_cell(row: Row, target: str, proof: Proof | None) -> dict[str, Any]:
    generated = row.generated(target)
    cell: dict[str, Any] = {"generated": generated if isinstance(generated, str) else total(generated)}
    if proof is not None:
        cell["hand"] = proof.counts[target]
        if isinstance(cell["generated"], int) and cell["hand"]:
            cell["ratio"] = round(cell["generated"] / cell["hand"], 2)
    return cell


def measure(row: Row) -> dict[str, Any]:
    """One row: generated and hand counts per target, and the hand version's proof."""
    proof, summary = _hand(row)
    result: dict[str, Any] = {"name": row.name, "kind": row.kind}
    if summary is not None:
        result["hand"] = summary
    result["targets"] = {target: _target_cell(row, target, proof) for target in TARGETS}
    return result


def _proof(hand: dict[str, Any] | None) -> str:
    if hand is None:
        return "-"
    ge = f"; GE {hand['ge_calls']}" if "ge_calls" in hand else ""
    return f"{'yes' if hand['equal'] else 'NO'}, {'yes' if not hand['droppable'] else 'NO'} ({hand['calls']} calls{ge})"


def _cell(cell: dict[str, Any]) -> str:
    generated = cell["generated"]
    if isinstance(generated, str):
        return "error" if "hand" not in cell else f"error/{cell['hand']}"
    if "hand" not in cell:
        return f"{generated}/-"
    ratio = f" {cell['ratio']:.2f}x" if "ratio" in cell else ""
    return f"{generated}/{cell['hand']}{ratio}"


def table(results: list[dict[str, Any]]) -> str:
    """The table: row per example/entry, per target ``generated/hand ratio``, then the hand proof."""
    lines = [f"{'example / entry':<26}" + "".join(f"{t:>18}" for t in TARGETS) + "  hand: equal, minimal"]
    for result in results:
        proof = _proof(result.get("hand"))
        cells = "".join(f"{_cell(result['targets'][t]):>18}" for t in TARGETS)
        lines.append(f"{result['name']:<26}{cells}  {proof}")
    errors = [
        (r["name"], t, c["generated"])
        for r in results
        for t, c in r["targets"].items()
        if isinstance(c["generated"], str)
    ]
    lines += [f"  {name} on {target}: {message}" for name, target, message in errors]
    return "\n".join(lines)


def markdown(results: list[dict[str, Any]]) -> str:
    """The same rows as a Markdown table (for docs/performance.md)."""
    lines = [
        "| example / entry | " + " | ".join(TARGETS) + " | hand: equal, minimal |",
        "| --- |" + " --- |" * (len(TARGETS) + 1),
    ]
    for result in results:
        proof = _proof(result.get("hand"))
        cells = " | ".join(_cell(result["targets"][t]) for t in TARGETS)
        lines.append(f"| `{result['name']}` | {cells} | {proof} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sync_minimal", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--only", nargs="*", default=None, help="only these examples / corpus entries")
    parser.add_argument(
        "--graph-inputs",
        action="store_true",
        help="the old premise: the model compiled alone, its tensor inputs graph inputs",
    )
    args = parser.parse_args(argv)
    selected = [row for row in rows(not args.graph_inputs) if args.only is None or row.name in args.only]
    results = [measure(row) for row in selected]
    print(json.dumps(results, indent=1) if args.json else markdown(results) if args.markdown else table(results))
    bad = [r["name"] for r in results if "hand" in r and (r["hand"]["droppable"] or not r["hand"]["equal"])]
    for name in bad:
        print(f"hand-written {name}: not minimal or not equal", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
