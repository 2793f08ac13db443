"""``npudsl suggest`` as a command: report, --diff, --in-place, picture, usage errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from npudsl.cli import main

pytest.importorskip("torch")

MODELS = Path(__file__).parent / "models"


@pytest.fixture
def moe(tmp_path: Path) -> Path:
    shutil.copy(MODELS / "moe_shared.py", tmp_path / "moe_shared.py")
    return tmp_path / "moe_shared.py"


def test_the_report_says_what_overlaps_with_what(moe: Path, capsys) -> None:
    assert main(["suggest", str(moe)]) == 0
    out, err = capsys.readouterr()
    assert 'SharedExpert.forward (called at line 34 of MoEBlock.forward, 1 call) on stream "shared_expert"' in out
    assert "beside: MoEBlock.routed" in out
    assert '@on_stream("shared_expert") on class SharedExpert' in out
    assert "predicted saving 25.9%" in out and "predicted saving 25.9%" in err
    assert moe.read_text() == (MODELS / "moe_shared.py").read_text()


def test_in_place_writes_the_proposal_and_a_second_run_finds_nothing(moe: Path, capsys) -> None:
    assert main(["suggest", str(moe), "--in-place"]) == 0
    assert '@on_stream("shared_expert")\nclass SharedExpert' in moe.read_text()
    assert capsys.readouterr().err.endswith(f"; wrote {moe}\n")
    assert main(["suggest", str(moe), "--diff"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "nothing worth moving" in err


def test_the_predicted_picture(moe: Path, tmp_path: Path, capsys) -> None:
    assert main(["suggest", str(moe), "--diff", "-o", str(tmp_path / "s.svg")]) == 0
    svg = (tmp_path / "s.svg").read_text()
    assert svg.startswith("<svg") and "shared_expert" in svg


@pytest.mark.parametrize(
    "argv, message",
    [
        (["missing.py"], "no such file"),
        (["{moe}", "-o", "s.png"], "must end in .svg"),
        (["{moe}", "--streams", "0"], "at least 1"),
        (["{moe}", "--diff", "--in-place"], "not allowed with"),
    ],
)
def test_usage_errors_exit_2_before_capturing(moe: Path, argv: list[str], message: str, capsys) -> None:
    assert main(["suggest", *(a.format(moe=moe) for a in argv)]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["suggest", "schedule"])  # 1: the file cannot be captured
def test_a_model_that_cannot_be_captured_whole_exits_saying_where(command: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / "printing.py"
    path.write_text(
        "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
        "        y = x * 2\n        print('hello')\n        return y\n\n\n"
        "def example_inputs():\n    return (torch.ones(4),)\n"
    )
    assert main([command, str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:8: torch.compile cannot capture Model as one graph (" in err and "print('hello')" in err
