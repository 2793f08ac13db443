"""The main job: run the transformed MoE decoder on the CPU and show which op ran on which stream.

``make demo`` first writes ``out/aclgraph/moe_decoder.py`` with ``npudsl transform``;
this script loads that generated code with the CPU stand-in for torchair, runs two
decoder layers, prints the stream of every op and torchair call in issue order,
and checks the result against the decorated model run eagerly.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

from npudsl.testing import torchair_stub

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "out" / "aclgraph" / "moe_decoder.py"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _print_schedule(log: torchair_stub.CallLog) -> None:
    print(f"{'#':>3}  {'stream':<8} call")
    for i, call in enumerate(log.calls, 1):
        detail = f" {call.args[0]}" if call.args and isinstance(call.args[0], str) else ""
        print(f"{i:>3}  {call.stream:<8} {call.name}{detail}")


def main() -> int:
    if not GENERATED.exists():
        print(f"{GENERATED} is missing: run `make demo`", file=sys.stderr)
        return 2
    decorated = _load(ROOT / "examples" / "moe_decoder.py", "moe_decoder")
    (x,) = decorated.example_inputs()
    torch.manual_seed(0)
    expected = decorated.MoEDecoder(layers=2)(x)
    with torchair_stub.installed(log_ops=True) as log:
        generated = _load(GENERATED, "moe_decoder_aclgraph")
        torch.manual_seed(0)
        model = generated.MoEDecoder(layers=2)
        log.calls.clear()
        actual = model(x)
    _print_schedule(log)
    streams = sorted({c.stream for c in log.calls})
    same = torch.equal(expected, actual)
    print(f"\n{len(log.calls)} calls on streams {streams}; output equals the eager model: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
