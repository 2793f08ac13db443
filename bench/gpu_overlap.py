"""Shared-expert overlap on a CUDA GPU: one stream vs npudsl's ``cuda`` code vs hand-written streams vs ideal.

    python3 bench/gpu_overlap.py [--hidden 4096] [--shared-inter 2816] [--experts 64]
                                 [--expert-inter 1408] [--top-k 8] [--batch 32] [--iters 200]

Never run in CI: it needs CUDA and exits with a message otherwise. Each variant runs
eagerly, under ``torch.compile(fullgraph=True)`` and replayed from a CUDA graph; the
ideal is the longer branch alone. Prints microseconds per step and the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python3 bench/<name>.py`

import torch  # noqa: E402

__all__ = ["main"]

Step = Callable[[torch.Tensor], torch.Tensor]


def _time(step: Step, x: torch.Tensor, iters: int) -> float:
    """Median microseconds per call, timed with CUDA events after a warm-up."""
    for _ in range(10):
        step(x)
    torch.cuda.synchronize()
    samples = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            step(x)
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / iters)
    return statistics.median(samples)


def _graphed(model: torch.nn.Module, x: torch.Tensor) -> Step:
    """Capture one call in a CUDA graph (side streams must rejoin before capture ends); replay it."""
    static = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(static)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = model(static)

    def replay(inp: torch.Tensor) -> torch.Tensor:
        static.copy_(inp)
        graph.replay()
        return out

    return replay


def _modes(model: torch.nn.Module, x: torch.Tensor, iters: int) -> dict[str, str]:
    makers: dict[str, Callable[[], Step]] = {
        "eager": lambda: model,
        "compile": lambda: torch.compile(model, fullgraph=True),
        "cuda graph": lambda: _graphed(model, x),
    }
    found = {}
    for mode, make in makers.items():
        try:
            found[mode] = f"{_time(make(), x, iters):9.1f}"
        except Exception as error:  # a mode a variant cannot run in is reported, not fatal
            found[mode] = f"failed: {type(error).__name__}: {str(error).splitlines()[0][:60]}"
        torch._dynamo.reset()
    return found


def _variants(args: argparse.Namespace) -> dict[str, torch.nn.Module]:
    from bench import gpu_models as g
    from npudsl.runtime.loader import swap_classes

    torch.manual_seed(0)
    w = g.Weights(args.hidden, args.shared_inter, args.experts, args.expert_inter, args.top_k)
    w = w.to(device="cuda", dtype=torch.bfloat16)
    generated = g.DecoratedMoE(w)
    swap_classes(generated, "cuda")
    return {
        "single stream": g.SingleMoE(w),
        "npudsl cuda": generated,
        "hand streams": g.HandMoE(w),
        "shared alone": g.SharedOnly(w),
        "routed alone": g.RoutedOnly(w),
    }


def _report(table: dict[str, dict[str, str]]) -> None:
    modes = list(next(iter(table.values())))
    print(f"{'us per step':<15}" + "".join(f"{m:>14}" for m in modes))
    for name, row in table.items():
        print(
            f"{name:<15}"
            + "".join(f"{row[m]:>14}" if not row[m].startswith("failed") else f"  {row[m]}" for m in modes)
        )
    for mode in modes:
        try:
            t = {k: float(v[mode]) for k, v in table.items()}
        except ValueError:
            continue
        ideal = max(t["shared alone"], t["routed alone"])
        print(
            f"[{mode}] single/npudsl {t['single stream'] / t['npudsl cuda']:.3f}x, single/hand "
            f"{t['single stream'] / t['hand streams']:.3f}x, npudsl/hand {t['npudsl cuda'] / t['hand streams']:.3f}, "
            f"npudsl/ideal {t['npudsl cuda'] / ideal:.3f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, default in (
        ("--hidden", 4096),
        ("--shared-inter", 2816),
        ("--experts", 64),
        ("--expert-inter", 1408),
        ("--top-k", 8),
        ("--batch", 32),
        ("--iters", 200),
    ):
        parser.add_argument(flag, type=int, default=default)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("gpu_overlap: no CUDA device here; this benchmark needs an NVIDIA GPU (nothing was measured)")
        return 0
    x = torch.randn(args.batch, args.hidden, device="cuda", dtype=torch.bfloat16)
    print(
        f"{torch.cuda.get_device_name()}: hidden {args.hidden}, shared inter {args.shared_inter}, "
        f"{args.experts} experts x {args.expert_inter} (top {args.top_k}), batch {args.batch}, bf16"
    )
    with torch.no_grad():
        table = {name: _modes(model, x, args.iters) for name, model in _variants(args).items()}
    _report(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
