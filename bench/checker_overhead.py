"""What the race checker adds to ``torch.compile`` on the 60-layer corpus model: checks on vs off, side by side.

    python3 bench/checker_overhead.py [--layers 60] [--repeat 3]

Both sides compile the decorated DeepSeek-V3.2 decoder of ``tests/corpus/cann_v32_deep``
(``layers`` layers, transformed in process for ``portable``) with ``torch.compile(fullgraph=True)``
and time the first call (dynamo's trace, the backend, one run), dynamo's cache reset before each:

- on: :func:`npudsl.race.npudsl_backend`: the checker decides each node's reads, writes
  and aliases from ATen schemas (one run on ``meta`` per op and argument layout), then
  checks every cross-stream access;
- off: a backend that runs the captured graph as it is (``gm.forward``).

Also printed: the checker alone on the captured graph, its per-layout cache cleared first.
Times are the best of ``--repeat`` rounds, the two sides taking turns within each round.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # run as `python3 bench/<name>.py`; the corpus lives in tests/

import torch  # noqa: E402
import torch.fx  # noqa: E402

from bench.timing import best_in_turns  # noqa: E402
from npudsl.race import (  # noqa: E402
    _effects,  # noqa: E402
    find_races,
    npudsl_backend,
)
from npudsl.runtime.loader import swap_classes  # noqa: E402

__all__ = ["main"]

TARGET = 1.5  # compile with the checker within 1.5x of compile without it


def _as_captured(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    del example_inputs
    return gm.forward


def _first_call(backend: Callable[..., Any], layers: int, graphs: list[torch.fx.GraphModule]) -> Callable[[], float]:
    from corpus import cann_v32_deep

    def keep(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        graphs.append(gm)
        return backend(gm, example_inputs)

    def measure() -> float:
        model = cann_v32_deep.build(layers=layers)
        swap_classes(model, "portable")
        torch._dynamo.reset()
        start = time.perf_counter()
        with torch.no_grad():
            torch.compile(model, backend=keep, fullgraph=True)(*cann_v32_deep.example_inputs())
        return time.perf_counter() - start

    return measure


def _checker_alone(gm: torch.fx.GraphModule) -> float:
    _effects._CACHE.clear()
    for node in gm.graph.nodes:
        node.meta.pop("npudsl_effect", None)
    start = time.perf_counter()
    problems = find_races(gm)
    assert not problems, problems
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    graphs: list[torch.fx.GraphModule] = []
    sides = {
        "on": _first_call(npudsl_backend, args.layers, graphs),
        "off": _first_call(_as_captured, args.layers, graphs),
    }
    times = best_in_turns(sides, args.repeat)
    alone = _checker_alone(graphs[-1])
    nodes = len(graphs[-1].graph.nodes)
    ratio = times["on"] / times["off"]
    print(
        f"cann_v32_deep, {args.layers} layers ({nodes} graph nodes): torch.compile + first call with the checker "
        f"{times['on']:.2f} s, without {times['off']:.2f} s; the checker alone (cold) {alone * 1e3:.0f} ms"
    )
    print(f"ratio on/off: {ratio:.3f} (target <= {TARGET}: {'met' if ratio <= TARGET else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
