"""How close ``npudsl suggest`` comes to the hand-written decorators of the examples, and how long it takes.

    python3 bench/suggest_quality.py [--repeat 3]

For each example: the saving ``npudsl schedule`` predicts for the example as
written (its hand-written decorators); then the example with npudsl's
decorators stripped (``npudsl.suggest.strip``), ``suggest`` asked for as many side
streams as the hand-written schedule uses, its proposal applied, and the saving
``schedule`` predicts for the result (the proposal's own prediction is printed
beside it: the two must agree). Goal: suggested / hand-written >= 95% on each.
Then the wall-clock time of ``npudsl suggest`` on ``examples/moe_decoder.py`` (4 layers)
with its decorators stripped (a new process, torch import included; best of
``--repeat``). Goal: under 10 s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as `python3 bench/<name>.py`

from npudsl.suggest import suggest  # noqa: E402
from npudsl.suggest.strip import strip_decorators  # noqa: E402
from npudsl.timeline import picture  # noqa: E402

__all__ = ["EXAMPLES", "compare", "main"]

EXAMPLES = ("core_split.py", "moe_decoder.py", "distributed_overlap.py", "seed000.py")
GOAL, TIME_GOAL = 0.95, 10.0


def compare(name: str, folder: Path) -> tuple[float, float, float, int]:
    """(hand-written saving, suggested saving as drawn, as promised, side streams) for one example."""
    hand = picture(str(ROOT / "examples" / name)).schedule
    streams = len(hand.streams) - 1
    stripped = folder / name
    stripped.write_text(strip_decorators((ROOT / "examples" / name).read_text()))
    found = suggest(str(stripped), streams=streams)
    stripped.write_text(found.proposed)
    return hand.saving, picture(str(stripped)).schedule.saving, found.plan.schedule.saving, streams


def _time_moe(repeat: int, folder: Path) -> float:
    """Best wall-clock seconds of ``npudsl suggest`` on the MoE example with its decorators stripped."""
    stripped = folder / "timed" / "moe_decoder.py"
    stripped.parent.mkdir()
    stripped.write_text(strip_decorators((ROOT / "examples" / "moe_decoder.py").read_text()))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "npudsl", "suggest", str(stripped)], check=True, capture_output=True,
                       cwd=ROOT)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing runs of suggest on the MoE example")
    args = parser.parse_args(argv)
    print("| example | side streams | hand-written saving | suggested saving (schedule / suggest) | ratio |")
    print("| --- | --- | --- | --- | --- |")
    met = True
    with tempfile.TemporaryDirectory() as folder:
        for name in EXAMPLES:
            hand, drawn, promised, streams = compare(name, Path(folder))
            ratio = drawn / hand if hand else 1.0
            met &= ratio >= GOAL
            print(f"| `{name}` | {streams} | {100 * hand:.1f}% | {100 * drawn:.1f}% / {100 * promised:.1f}% "
                  f"| **{100 * ratio:.0f}%** |")
        seconds = _time_moe(args.repeat, Path(folder))
    print(f"\ngoal >= {100 * GOAL:.0f}% on each: {'met' if met else 'not met'}")
    print(f"npudsl suggest examples/moe_decoder.py (stripped): {seconds:.2f} s (best of {args.repeat}; goal < {TIME_GOAL:g} s: "
          f"{'met' if seconds < TIME_GOAL else 'not met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
