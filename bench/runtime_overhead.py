"""A decorated block vs the same block written by hand with ``npudsl.runtime`` calls (CPU or any device).

    python3 bench/runtime_overhead.py [--calls 100] [--repeat 25] [--threads 1] [--hidden 256] [--tokens 16]

Compiled: both are captured by ``torch.compile(fullgraph=True)`` with a recording
backend; their FX graphs must be the same node for node (op, target, and the tags
of the runtime ops). Eager: per-call time of the hand-written block, of the
decorated block transformed for ``portable`` (what ``npudsl.compile`` runs), and of
the decorated block untransformed (the decorators' eager runtime).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python3 bench/<name>.py`

import torch  # noqa: E402
import torch.fx  # noqa: E402

from bench.overhead_models import DecoratedBlock, HandBlock, build, inputs  # noqa: E402
from bench.timing import best_in_turns, best_of  # noqa: E402
from npudsl.runtime.loader import swap_classes  # noqa: E402

__all__ = ["graph_signature", "main", "per_call"]

EAGER_TARGET = 1.05  # transformed eager within 5% of hand-written


def graph_signature(model: torch.nn.Module, x: torch.Tensor) -> list[tuple[str, str, tuple[Any, ...]]]:
    """(op, target, constant args) of every node of the graph ``torch.compile(fullgraph=True)`` captures."""
    graphs: list[torch.fx.GraphModule] = []

    def record(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        del example_inputs
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend=record, fullgraph=True)(x)
    return [
        (n.op, str(n.target), tuple(a for a in n.args if isinstance(a, (str, int, float))))
        for n in graphs[0].graph.nodes
    ]


def per_call(model: Any, x: torch.Tensor, calls: int, repeat: int) -> float:
    """Best-of-``repeat`` mean time of one call, in microseconds."""

    def loop() -> None:
        for _ in range(calls):
            model(x)

    with torch.no_grad():
        loop()  # warm up
        return best_of(loop, repeat, time.perf_counter) / calls * 1e6


def build_models(hidden: int, inter: int) -> dict[str, torch.nn.Module]:
    transformed = build(DecoratedBlock, hidden, inter)
    swap_classes(transformed, "portable")
    return {
        "hand": build(HandBlock, hidden, inter),
        "transformed": transformed,
        "untransformed": build(DecoratedBlock, hidden, inter),
    }


def _eager(models: dict[str, torch.nn.Module], x: torch.Tensor, calls: int, repeat: int) -> dict[str, float]:
    """Per-call times, the models taking turns within each repeat (fair under varying load)."""
    return best_in_turns(
        {name: functools.partial(per_call, model, x, calls, 1) for name, model in models.items()}, repeat
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=25)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (1: steadier timings)")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=16)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    models, x = build_models(args.hidden, 2 * args.hidden), inputs(args.tokens, args.hidden)
    hand = graph_signature(models["hand"], x)
    same = {name: graph_signature(models[name], x) == hand for name in ("transformed", "untransformed")}
    print(
        f"compiled graphs ({len(hand)} nodes): transformed == hand-written: {same['transformed']}; "
        f"untransformed (eager runtime, traced) == hand-written: {same['untransformed']}"
    )
    times = _eager(models, x, args.calls, args.repeat)
    print("eager per call: " + ", ".join(f"{k} {v:.1f} us" for k, v in times.items()))
    ratio = times["transformed"] / times["hand"]
    print(
        f"ratio transformed/hand-written eager time: {ratio:.3f} "
        f"(target <= {EAGER_TARGET}: {'met' if ratio <= EAGER_TARGET else 'MISSED'}); "
        f"untransformed/hand-written: {times['untransformed'] / times['hand']:.3f}"
    )
    return 0 if same["transformed"] else 1


if __name__ == "__main__":
    sys.exit(main())
