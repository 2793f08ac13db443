"""How close ``npudsl suggest`` comes to the hand-written decorators of the examples, and how long it takes.

    python3 bench/suggest_quality.py [--repeat 3] [--hf]

For each example: the saving ``npudsl schedule`` predicts for the example as
written (its hand-written decorators); then the example with npudsl's
decorators stripped (``npudsl.suggest.strip``), ``suggest`` asked for as many side
streams as the hand-written schedule uses, its proposal applied, and the saving
``schedule`` predicts for the result (the proposal's own prediction is printed
beside it: the two must agree). Goal: suggested / hand-written >= 95% on each.
Then the wall-clock time of ``npudsl suggest`` on ``examples/moe_decoder.py`` (4 layers)
with its decorators stripped (a new process, torch import included; best of
``--repeat``). Goal: under 10 s.

Then the same on real Hugging Face MoE modeling files (``--hf``, needs
``transformers``; tests/hf/hf_models.py builds each copy with a tiny config):
the hand annotation (the shared expert's class on a side stream, its call first)
against ``suggest``'s proposal, and the time of ``npudsl suggest`` on each (a new
process, best of ``--repeat``).
"""

from __future__ import annotations

import argparse
import resource
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
    return _timed(stripped, repeat)


def _timed(path: Path, repeat: int) -> float:
    """Best wall-clock seconds of ``npudsl suggest path`` in a new process."""
    return _timed_cpu(path, repeat)[0]


# The floor: a new process that imports the file (torch with it) and captures its Model once, no npudsl.
_FLOOR = """import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("floor", sys.argv[1]); m = importlib.util.module_from_spec(spec)
sys.modules["floor"] = m
spec.loader.exec_module(m)
with torch.no_grad():
    torch.compile(m.Model(), backend=lambda gm, ex: gm.forward, fullgraph=True)(*m.example_inputs())
"""


def _timed_cpu(path: Path, repeat: int, command: tuple[str, ...] = ("-m", "npudsl", "suggest")) -> tuple[float, float]:
    """Best wall-clock seconds of ``npudsl suggest path`` (or ``python command path``) in a new process, and that
    run's CPU seconds (user + system: on a shared machine the wall clock also counts the time other processes
    held the cores)."""
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run([sys.executable, *command, str(path)], check=True, capture_output=True, cwd=path.parent)
        after, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter() - start
        best = min(best, (wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime))
    return best


def compare_hf(name: str, folder: Path, repeat: int) -> tuple[float, float, float, tuple[float, ...]]:
    """(hand saving, suggested saving as drawn, as promised, (wall, CPU) seconds of suggest and of the floor) for
    one Hugging Face model."""
    sys.path.insert(0, str(ROOT / "tests" / "hf"))
    from hf_models import ARCHITECTURES, hand_annotated, standalone

    arch, root = ARCHITECTURES[name], folder / name
    (root / "hand").mkdir(parents=True)
    original = standalone(arch, root)
    hand = picture(str(hand_annotated(arch, original, root / "hand"))).schedule
    seconds = _timed_cpu(original, repeat) + _timed_cpu(original, repeat, ("-c", _FLOOR))
    found = suggest(str(original))
    original.write_text(found.proposed)
    return hand.saving, picture(str(original)).schedule.saving, found.plan.schedule.saving, seconds


def _hf_table(repeat: int) -> bool:
    sys.path.insert(0, str(ROOT / "tests" / "hf"))
    from hf_models import ARCHITECTURES

    print(
        "\n| Hugging Face model | hand saving | suggested saving (schedule / suggest) | ratio "
        "| suggest: wall (CPU) | floor: wall (CPU) | CPU suggest / floor |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    met = True
    with tempfile.TemporaryDirectory() as folder:
        for name in sorted(ARCHITECTURES):
            hand, drawn, promised, (wall, cpu, floor_wall, floor_cpu) = compare_hf(name, Path(folder), repeat)
            ratio = drawn / hand if hand else 1.0
            met &= ratio >= GOAL and wall < TIME_GOAL
            print(
                f"| `{name}` | {100 * hand:.1f}% | {100 * drawn:.1f}% / {100 * promised:.1f}% "
                f"| **{100 * ratio:.0f}%** | {wall:.2f} s ({cpu:.2f} s) | {floor_wall:.2f} s ({floor_cpu:.2f} s) "
                f"| {cpu / floor_cpu:.2f} |"
            )
    print(f"\ngoal >= {100 * GOAL:.0f}% and < {TIME_GOAL:g} s on each: {'met' if met else 'not met'}")
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing runs of suggest on each timed model")
    parser.add_argument("--hf", action="store_true", help="only the Hugging Face models (needs transformers)")
    args = parser.parse_args(argv)
    if args.hf:
        _hf_table(args.repeat)
        return 0
    print("| example | side streams | hand-written saving | suggested saving (schedule / suggest) | ratio |")
    print("| --- | --- | --- | --- | --- |")
    met = True
    with tempfile.TemporaryDirectory() as folder:
        for name in EXAMPLES:
            hand, drawn, promised, streams = compare(name, Path(folder))
            ratio = drawn / hand if hand else 1.0
            met &= ratio >= GOAL
            print(
                f"| `{name}` | {streams} | {100 * hand:.1f}% | {100 * drawn:.1f}% / {100 * promised:.1f}% "
                f"| **{100 * ratio:.0f}%** |"
            )
        seconds = _time_moe(args.repeat, Path(folder))
    print(f"\ngoal >= {100 * GOAL:.0f}% on each: {'met' if met else 'not met'}")
    print(
        f"npudsl suggest examples/moe_decoder.py (stripped): {seconds:.2f} s (best of {args.repeat}; "
        f"goal < {TIME_GOAL:g} s: "
        f"{'met' if seconds < TIME_GOAL else 'not met'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
