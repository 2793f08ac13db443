"""The schedule picture of the MoE example: a well-formed SVG with one lane per stream."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from npudsl.errors import NpudslError
from npudsl.timeline import picture
from npudsl.timeline.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MOE = os.path.join(ROOT, "examples", "moe_decoder.py")
_NS = "{http://www.w3.org/2000/svg}"


def test_moe_decoder_has_one_lane_per_stream() -> None:
    result = picture(MOE)
    root = ET.fromstring(result.svg)
    lanes = [g.get("data-stream") for g in root.iter(f"{_NS}g") if g.get("class") == "lane"]
    assert lanes == ["default", "shared"] == list(result.schedule.streams)
    assert [g for g in root.iter(f"{_NS}g") if g.get("class") == "event"]  # fork and join arrows
    assert 0 < result.schedule.saving < 1
    assert result.schedule.makespan < result.schedule.serial


def test_cli_writes_the_svg_and_prints_the_saving(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = os.path.join(str(tmp_path), "moe.svg")
    assert main([MOE, "-o", out]) == 0
    assert "predicted saving" in capsys.readouterr().err
    ET.parse(out)


def test_a_file_without_example_inputs_is_refused(tmp_path: Path) -> None:
    path = os.path.join(str(tmp_path), "no_inputs.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("import torch\n\nclass M(torch.nn.Module):\n    pass\n")
    with pytest.raises(NpudslError, match="example_inputs"):
        picture(path)


@pytest.mark.parametrize(
    "name,streams",
    [
        ("seed000", ["default", "1", "2"]),
        ("core_split", ["default", "side"]),
        ("distributed_overlap", ["default", "comm"]),
    ],
)
def test_every_example_is_pictured(name: str, streams: list[str]) -> None:
    """The distributed example is captured in a one-rank gloo group that the tool opens and closes."""
    import torch.distributed as dist

    result = picture(os.path.join(ROOT, "examples", f"{name}.py"))
    assert list(result.schedule.streams) == streams
    assert not dist.is_initialized()
