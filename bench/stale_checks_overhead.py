"""What the portable target's checks cost per compiled call: graph memory tracking on vs off (CPU or any device).

    python3 bench/stale_checks_overhead.py [--calls 200] [--repeat 25] [--threads 1] [--hidden 256] [--tokens 16]

Both sides compile the same decorated decoder block, transformed for ``portable``
(``bench/overhead_models.py``), with ``torch.compile(fullgraph=True)``:

- on: ``npudsl.compile(model, target="portable")``'s backend: each captured graph is
  race-checked once, then every call runs it and accounts for its graph memory
  (outputs of the call before expire: using one raises ``StaleOutputError``);
- off: a backend that runs the captured graph as it is (``gm.forward``).

The loop is a decode loop that feeds each output back as the next input, so every
call also expires the previous output (the costly path). Per-call times are the best
of ``--repeat`` rounds, the two sides taking turns within each round.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python3 bench/<name>.py`

import torch  # noqa: E402
import torch.fx  # noqa: E402

from bench.overhead_models import DecoratedBlock, build, inputs  # noqa: E402
from bench.timing import best_in_turns, best_of  # noqa: E402
from npudsl.graph_config import graph_memory  # noqa: E402
from npudsl.race import portable_backend  # noqa: E402
from npudsl.runtime.loader import swap_classes  # noqa: E402

__all__ = ["compiled_pair", "decode", "main"]

TARGET = 1.10  # checks on within 10% of checks off


def _as_captured(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    del example_inputs
    return gm.forward


def compiled_pair(hidden: int, tokens: int) -> tuple[dict[str, Callable[..., Any]], torch.Tensor]:
    """The block compiled with the checks on and off (each its own instance, same weights), and an input."""
    backends = {"on": portable_backend(graph_memory()), "off": _as_captured}
    compiled = {}
    for name, backend in backends.items():
        model = build(DecoratedBlock, hidden, 2 * hidden)
        swap_classes(model, "portable")
        compiled[name] = torch.compile(model, backend=backend, fullgraph=True)
    return compiled, inputs(tokens, hidden)


def decode(model: Callable[..., Any], x: torch.Tensor, calls: int) -> torch.Tensor:
    """``calls`` steps, each output the next input (the block's LayerNorm keeps the numbers finite)."""
    for _ in range(calls):
        x = model(x)
    return x


def _per_call(models: dict[str, Callable[..., Any]], x: torch.Tensor, calls: int, repeat: int) -> dict[str, float]:
    def measure(model: Callable[..., Any]) -> Callable[[], float]:
        return lambda: best_of(lambda: decode(model, x, calls), 1, time.perf_counter) / calls * 1e6

    with torch.no_grad():
        for model in models.values():
            decode(model, x, 3)  # compile and warm up
        return best_in_turns({name: measure(model) for name, model in models.items()}, repeat)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=25)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (1: steadier timings)")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=16)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    models, x = compiled_pair(args.hidden, args.tokens)
    times = _per_call(models, x, args.calls, args.repeat)
    ratio = times["on"] / times["off"]
    print(
        f"portable compiled call (hidden {args.hidden}, tokens {args.tokens}, {args.calls} decode steps): "
        f"checks on {times['on']:.1f} us, checks off {times['off']:.1f} us"
    )
    print(f"ratio on/off: {ratio:.3f} (target <= {TARGET}: {'met' if ratio <= TARGET else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
