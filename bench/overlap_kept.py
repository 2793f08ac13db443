"""How much of the hand-placed overlap the automatic sync keeps, per real engine idiom.

    python3 bench/overlap_kept.py

For each pair of ``bench/overlap_pairs.py`` (one math, written with ``@on_stream`` and written with
every record, wait and ``record_stream`` placed by hand), both models are transformed for
``portable``, captured with ``torch.compile(fullgraph=True)`` and simulated on the cost model of
``npudsl schedule``; the table prints the predicted saving of each and their ratio. Both are also
compiled with ``npudsl.compile`` (the race checker runs on the captured graph: a race raises) and
their outputs compared. Goal: the automatic side keeps >= 90% of the hand-placed saving on every pair.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python3 bench/<name>.py`

import torch  # noqa: E402

import npudsl  # noqa: E402
from npudsl.timeline import picture  # noqa: E402
from npudsl.timeline.capture import load_example  # noqa: E402

__all__ = ["GOAL", "compare", "kept", "main", "verdict"]

GOAL = 0.90
PAIRS_FILE = str(Path(__file__).resolve().parent / "overlap_pairs.py")


def _saving(model: str, inputs: str) -> float:
    return picture(PAIRS_FILE, model=model, inputs=inputs).schedule.saving


def _compiled_output(module: object, model: str, inputs: str) -> torch.Tensor:
    torch.manual_seed(0)
    instance = getattr(module, model)().eval()
    torch._dynamo.reset()
    with torch.no_grad():
        return npudsl.compile(instance, target="portable", fullgraph=True)(*getattr(module, inputs)())


def compare(name: str) -> tuple[float, float, bool]:
    """(automatic saving, hand-placed saving, equal outputs) for one pair; a race raises."""
    module = load_example(PAIRS_FILE)
    auto, hand, inputs = module.PAIRS[name]
    equal = torch.equal(_compiled_output(module, auto, inputs), _compiled_output(module, hand, inputs))
    return _saving(auto, inputs), _saving(hand, inputs), equal


def kept(auto: float, hand: float) -> float:
    """The fraction of the hand-placed saving the automatic side keeps (1.0 when the hand side saves nothing)."""
    return auto / hand if hand else 1.0


def verdict(what: str, worst: float) -> str:
    met = "met" if worst >= GOAL else "NOT met"
    return f"worst {what} keeps {worst:.1%} of the hand-placed saving (goal >= {GOAL:.0%}: {met})"


def main() -> int:
    print(f"{'pair':<26} {'automatic':>10} {'hand-placed':>12} {'kept':>7}  equal, race-free")
    worst = 1.0
    for name in load_example(PAIRS_FILE).PAIRS:
        auto, hand, equal = compare(name)
        worst = min(worst, kept(auto, hand))
        print(f"{name:<26} {auto:>10.1%} {hand:>12.1%} {kept(auto, hand):>7.1%}  {'yes' if equal else 'NO'}, yes")
    print(verdict("pair", worst))
    print("per corpus entry: python -m bench.overlap_kept_corpus")
    return 0 if worst >= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
