"""``npudsl schedule``: a real subcommand; SVG with axis, legend and labels; Chrome trace; priced communication."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cli_util import REPO
from npudsl.cli import main

pytest.importorskip("torch")
from npudsl.timeline import picture  # noqa: E402
from npudsl.timeline.cost import Hardware  # noqa: E402

EXAMPLES = REPO / "examples"
_NS = "{http://www.w3.org/2000/svg}"
_PLAIN_MODEL = """import torch
from torch import nn

from npudsl import on_stream


class Side(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(16, 16)

    @on_stream("side")
    def forward(self, x):
        return self.lin(x)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.side = Side()
        self.main = nn.Linear(16, 16)

    def forward(self, x):
        s = self.side(x)
        m = self.main(x)
        return m + s
"""


def test_options_before_the_file_svg_on_stdout_summary_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedule", "--model", "MoEDecoder", str(EXAMPLES / "moe_decoder.py")]) == 0
    out, err = capsys.readouterr()
    svg = ET.fromstring(out)  # nothing but the picture on stdout
    assert "predicted saving" in err
    texts = ["".join(t.itertext()) for t in svg.iter(f"{_NS}text")]
    assert any(t.startswith("time (") and t.endswith("s)") for t in texts)  # the axis says its unit
    assert "SharedExpert.forward" in texts  # side-stream work is labelled, not only in tooltips
    assert [g for g in svg.iter(f"{_NS}g") if g.get("class") == "legend"]
    assert len([g for g in svg.iter(f"{_NS}g") if g.get("class") == "axis"]) == 1


def test_chrome_trace_has_one_thread_per_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "moe.json"
    assert main(["schedule", str(EXAMPLES / "moe_decoder.py"), "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    events = json.loads(out.read_text(encoding="utf-8"))["traceEvents"]
    threads = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert sorted(threads.values()) == ["default", "shared"]
    ops = [e for e in events if e["ph"] == "X" and e["cat"] == "op"]
    assert {threads[e["tid"]] for e in ops} == {"default", "shared"} and "linear" in {e["name"] for e in ops}
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts and starts.keys() == ends.keys()
    assert all(threads[starts[i]["tid"]] != threads[ends[i]["tid"]] for i in starts)  # arrows cross streams
    assert all(starts[i]["ts"] <= ends[i]["ts"] for i in starts)


def test_inputs_from_another_file_so_the_model_needs_no_edits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "net.py").write_text(_PLAIN_MODEL, encoding="utf-8")
    (tmp_path / "inputs.py").write_text("import torch\n\n\ndef make():\n    return (torch.randn(4, 16),)\n")
    argv = ["schedule", str(tmp_path / "net.py"), "--inputs", f"{tmp_path / 'inputs.py'}:make"]
    assert main([*argv, "-o", str(tmp_path / "net.svg")]) == 0
    assert "2 streams (default, side)" in capsys.readouterr().err
    assert main(["schedule", str(tmp_path / "net.py"), "-o", str(tmp_path / "x.svg")]) == 1
    assert "defines no function example_inputs()" in capsys.readouterr().err


def test_collectives_are_priced_by_bytes_over_the_link() -> None:
    path = str(EXAMPLES / "distributed_overlap.py")
    fast, slow = (picture(path, hardware=Hardware(link_bandwidth=gbps * 1e9)).schedule for gbps in (50, 25))
    reduce_fast = next(s for s in fast.slots if s.label == "all_reduce")
    reduce_slow = next(s for s in slow.slots if s.label == "all_reduce")
    sent = 32 * 64 * 4  # the float32 gradient, sent twice by an all-reduce
    assert reduce_fast.end - reduce_fast.start == pytest.approx(1e6 * 2 * sent / 50e9)
    assert reduce_slow.end - reduce_slow.start == pytest.approx(2 * (reduce_fast.end - reduce_fast.start))
    assert reduce_fast.stream == "comm"
    assert [(r.stream, r.label) for r in fast.regions] == [("comm", "all_reduce")]
