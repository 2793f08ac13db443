"""How much of the hand schedule's overlap the generated code keeps, per corpus entry.

    .venv/bin/python -m bench.overlap_kept_corpus [--markdown] [--only NAME ...] [--alone]

For every corpus entry (``tests/corpus/registry.py``), the generated portable
package (``tests/corpus/matrix.py``'s ``generated_package``, run race-checked as
``bench.sync_sources`` runs it) and the hand-written version
(``bench/hand_written/<entry>.py``, race-checked by ``npudsl.race``) are each
captured with ``torch.compile(fullgraph=True)`` and simulated on the cost model of
``npudsl schedule``. The entries are small and route tokens by value (their shapes
are data-dependent), so each captured graph is first run once on its own real
inputs and the cost model prices the shapes that run saw. The table prints the
predicted saving of each side and their ratio. Goal: >= 90% on every entry. Numerics
are not compared here: ``tests/corpus`` checks the generated code against the
entry's twin, ``bench.sync_minimal`` the hand version. Both sides are compiled alone
(the premise ``--graph-inputs`` of ``bench.sync_minimal``, :mod:`bench.sync_premise`):
the forks and ``record_stream`` a caller-made input needs cost no time in the model.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python3 bench/<name>.py`

import torch  # noqa: E402

from bench.overlap_kept import GOAL, kept, verdict  # noqa: E402
from bench.overlap_kept_shapes import Captured, checked_graphs, recording_backend, schedule  # noqa: E402
from bench.sync_hand import hand_module  # noqa: E402
from bench.sync_premise import premise  # noqa: E402
from bench.sync_sources import Row, rows  # noqa: E402
from npudsl.race import npudsl_backend  # noqa: E402
from npudsl.timeline.simulate import Schedule  # noqa: E402

__all__ = ["compare", "entries", "generated", "hand", "main"]


def entries() -> list[str]:
    """The corpus entries that have a hand-written version, in the registry's order."""
    return [row.name for row in rows() if row.kind == "corpus" and hand_module(row) is not None]


def generated(name: str, alone: bool = False) -> Schedule:
    """The simulated schedule of ``name``'s generated portable code (a race raises); ``alone``: each file
    transformed in a run of its own."""
    seen: list[Captured] = []
    row = Row(name, "corpus", caller=False, alone=alone)
    with checked_graphs(seen):
        counts = row.generated("portable")  # the graph comes via ``checked_graphs``
    if isinstance(counts, str) or not seen:
        raise AssertionError(f"{name}: the generated portable code was not captured: {counts}")
    return schedule(seen[0])


def hand(name: str) -> Schedule:
    """The simulated schedule of ``name``'s hand-written version (a race raises)."""
    row = Row(name, "corpus", caller=False)
    model, inputs = row.reference()
    module = hand_module(row)
    seen: list[Captured] = []
    torch._dynamo.reset()
    backend = recording_backend(seen, npudsl_backend)
    with torch.no_grad(), premise(False):
        torch.compile(module.Hand(copy.deepcopy(model)), backend=backend, fullgraph=True)(*inputs())
    return schedule(seen[0])


def compare(name: str) -> tuple[float, float]:
    """(generated saving, hand saving) for one corpus entry."""
    return generated(name).saving, hand(name).saving


Measured = tuple[str, Schedule, Schedule]  # entry, generated, hand-written


def _cells(gen: Schedule, own: Schedule) -> tuple[str, str, str, str]:
    """Both savings, the share kept, and the generated makespan over the hand one (both do the same math
    but not always the same ops: a hand version may skip one whose result nothing reads)."""
    ratio = gen.makespan / own.makespan if own.makespan else 1.0
    return f"{gen.saving:.1%}", f"{own.saving:.1%}", f"{kept(gen.saving, own.saving):.1%}", f"{ratio:.2f}"


def _table(measured: list[Measured], markdown: bool) -> list[str]:
    if markdown:
        lines = [
            "| corpus entry | generated | hand-written | kept | time generated/hand |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        return lines + ["| `{}` | {} | {} | {} | {} |".format(n, *_cells(g, h)) for n, g, h in measured]
    lines = [f"{'corpus entry':<28} {'generated':>10} {'hand-written':>13} {'kept':>7} {'time gen/hand':>14}"]
    return lines + ["{:<28} {:>10} {:>13} {:>7} {:>14}".format(n, *_cells(g, h)) for n, g, h in measured]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overlap_kept_corpus", description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--only", nargs="*", default=None, help="only these corpus entries")
    parser.add_argument("--alone", action="store_true", help="each file of an entry transformed in a run of its own")
    args = parser.parse_args(argv)
    names = [name for name in entries() if args.only is None or name in args.only]
    measured = [(name, generated(name, args.alone), hand(name)) for name in names]
    print("\n".join(_table(measured, args.markdown)))
    worst = min((kept(g.saving, h.saving) for _, g, h in measured), default=1.0)
    print(verdict("entry", worst))
    return 0 if worst >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
