"""Which sync calls of the generated code could go: the minimality proof run on the generated graph.

    .venv/bin/python -m bench.sync_generated [--graph-inputs] [--target T] NAME ...

Where a row of ``bench.sync_minimal`` is above 1.00x, this names the extra calls:
the generated code of the row (portable by default: its runtime calls are what
:mod:`bench.sync_proof` reads; aclgraph and the native targets spell the same
schedule; ``ge`` is read on torchair's ops by :mod:`bench.sync_ge_proof`) is
captured under the same premise as the table, and each of its sync calls dropped
alone and the race checker run again, as for the hand versions. The
user's own events stay (:func:`bench.sync_hand.keep_user_events`). A call listed is
one the planner could leave out on this run without a race.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python3 bench/<name>.py`

from bench.sync_ge_proof import ge_drops  # noqa: E402
from bench.sync_hand import hand_module, keep_user_events  # noqa: E402
from bench.sync_proof import Drop, drops  # noqa: E402
from bench.sync_sources import Row, rows  # noqa: E402

__all__ = ["droppable", "main"]


def droppable(row: Row, target: str = "portable") -> list[Drop]:
    """The sync calls of ``row``'s generated code for ``target`` that can go alone without a race."""
    module = hand_module(row)
    events = tuple(module.USER_EVENTS) if module is not None else ()
    graph = row.graph(target)
    found = ge_drops(graph) if target == "ge" else drops(graph)
    return [drop for drop in keep_user_events(found, events) if not drop.needed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sync_generated", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+", help="examples / corpus entries")
    parser.add_argument("--target", default="portable", help="portable (the default), a target spelled like it, or ge")
    parser.add_argument("--graph-inputs", action="store_true", help="the model compiled alone (old premise)")
    args = parser.parse_args(argv)
    for row in [row for row in rows(not args.graph_inputs) if row.name in args.names]:
        found = droppable(row, args.target)
        print(f"{row.name} ({args.target}): {len(found)} droppable")
        for drop in found:
            print(f"  #{drop.index} {drop.call}: {drop.why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
