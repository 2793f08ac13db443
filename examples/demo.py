"""The main job: compile the MoE decoder whole with npudsl on the CPU and show which op ran on which stream.

``make demo`` first writes the aclgraph code of ``examples/moe_decoder.py`` to
``out/aclgraph/`` with ``npudsl transform``. This script then compiles the same
example with ``npudsl.compile`` (portable target, ``fullgraph=True``): the race
checker runs on the captured graph, the graph's ops are listed with their
streams, and the result is compared with the undecorated model's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import npudsl
from npudsl.race._timeline import runtime_op
from npudsl.timeline.capture import capture_graph, load_example

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "out" / "aclgraph" / "moe_decoder.py"


def _print_schedule(gm: torch.fx.GraphModule) -> set[str]:
    """Each op of the graph with the stream it is issued on; returns the streams seen."""
    streams, seen = ["default"], {"default"}
    print(f"{'#':>3}  {'stream':<8} op")
    for i, node in enumerate((n for n in gm.graph.nodes if n.op in ("call_function", "call_method")), 1):
        op = runtime_op(node)
        if op == "stream_enter":
            streams.append(node.args[0])
            seen.add(node.args[0])
        name = f"npudsl.{op}{tuple(a for a in node.args if not isinstance(a, torch.fx.Node))}" if op \
            else getattr(node.target, "__name__", str(node.target))
        print(f"{i:>3}  {streams[-1]:<8} {name}")
        if op == "stream_exit":
            streams.pop()
    return seen


def main() -> int:
    if not GENERATED.exists():
        print(f"{GENERATED} is missing: run `make demo`", file=sys.stderr)
        return 2
    print(f"npudsl transform wrote {GENERATED.relative_to(ROOT)} (target aclgraph)\n")
    example = load_example(str(ROOT / "examples" / "moe_decoder.py"))
    (x,) = example.example_inputs()
    torch.manual_seed(0)
    undecorated = example.MoEDecoder(layers=2, multistream=False)
    expected = undecorated(x)
    torch.manual_seed(0)
    model = example.MoEDecoder(layers=2)
    gm, _ = capture_graph(model, (x,))
    streams = _print_schedule(gm)
    actual = npudsl.compile(model, fullgraph=True)(x)  # raises StreamRaceError on an unsafe schedule
    same = torch.equal(expected, actual)
    print(f"\nstreams {sorted(streams)}; race check passed; output equals the single-stream model: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
