"""``--model``/``--inputs`` of ``suggest`` and ``schedule``: a function that returns the model (a class that needs
a config, as every Hugging Face class does), and errors in the user's code as one positioned line, exit 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from npudsl.cli import main

pytest.importorskip("torch")

MODELS = Path(__file__).parent / "models"
# A model whose class needs a config, as Hugging Face's do; make.py builds it.
CONFIGURED = """import torch
from torch import nn
from torch.nn import functional as F


class Config:
    def __init__(self, hidden=64):
        self.hidden = hidden


class Shared(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden, 4 * config.hidden, bias=False)
        self.down = nn.Linear(4 * config.hidden, config.hidden, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.up(x)))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.router = nn.Linear(config.hidden, 4 * config.hidden, bias=False)
        self.out = nn.Linear(4 * config.hidden, config.hidden, bias=False)
        self.shared = Shared(config)

    def forward(self, x):
        routed = self.out(F.silu(self.router(x)))
        return routed + self.shared(x)
"""
MAKE = """import torch
from block import Block, Config


def make_model():
    return Block(Config(hidden=64))


def example_inputs():
    return (torch.randn(16, 64, generator=torch.Generator().manual_seed(0)),)
"""


@pytest.fixture
def block(tmp_path: Path) -> Path:
    (tmp_path / "block.py").write_text(CONFIGURED)
    (tmp_path / "make.py").write_text(MAKE)
    return tmp_path / "block.py"


@pytest.fixture(autouse=True)
def _importable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """make.py imports this test's block.py, not another test's."""
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("block", "make"):
        monkeypatch.delitem(sys.modules, name, raising=False)


def test_a_class_that_needs_a_config_is_named_with_its_line_and_the_cure(block: Path, capsys) -> None:
    assert main(["suggest", str(block), "--model", "Block", "--inputs", f"{block.parent}/make.py:example_inputs"]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"{block}:21:1: class Block needs arguments (config); pass --model FILE.py:make_model (or "
        "package.module:make_model), a function that returns the model\n"
    )


def test_a_function_that_returns_the_model_is_suggested_on_and_the_diff_applies(
    block: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(block.parent)
    assert (
        main(["suggest", "block.py", "--model", "make.py:make_model", "--inputs", "make.py:example_inputs", "--diff"])
        == 0
    )
    patch = capsys.readouterr().out
    assert "+        shared_out = self.shared(x)\n" in patch and '+@on_stream("shared")\n' in patch
    subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=block.parent, check=True)
    assert main(["check", str(block)]) == 0


def test_a_package_module_function_picks_the_model_for_schedule(block: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "b.json"
    assert (
        main(["schedule", str(block), "--model", "make:make_model", "--inputs", "make:example_inputs", "-o", str(out)])
        == 0
    )
    assert '"traceEvents"' in out.read_text()


@pytest.mark.parametrize("command", ["suggest", "schedule"])
@pytest.mark.parametrize(
    "body, where, message",
    [
        (
            "import torch\nx = 1\nraise ValueError('no GPU here')\n",
            "3:1",
            "importing {path} failed: ValueError: no GPU here;",
        ),
        ("import torch\ndef f(:\n    pass\n", "2:7", "importing {path} failed: SyntaxError: invalid syntax;"),
        (
            "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()"
            "\n        self.w = nn.Parameter(torch.ones(3, 'x'))\n\n\n"
            "def example_inputs():\n    return (torch.ones(3),)\n",
            "8:31",
            "building the model (Model()) failed: TypeError:",
        ),
        (
            "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
            "        return x * 2\n"
            "\n\ndef example_inputs():\n    return (torch.ones(3) @ torch.ones(4),)\n",
            "11:13",
            "making the inputs (example_inputs()) failed: RuntimeError:",
        ),
        (
            "import torch\n\n\ndef example_inputs():\n    return (torch.ones(3),)\n",
            "1:1",
            "no nn.Module class; pass --model FILE.py:make_model",
        ),
    ],
)
def test_an_error_in_the_users_file_is_one_positioned_line(
    command: str, body: str, where: str, message: str, tmp_path: Path, capsys
) -> None:
    path = tmp_path / "broken.py"
    path.write_text(body)
    assert main([command, str(path), "--model", "Model"] if "class Model" in body else [command, str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:{where}: {message.format(path=path)}") and err.count("\n") == 1
    assert "Traceback" not in err


def test_a_model_function_that_returns_no_module_says_so(block: Path, capsys) -> None:
    (block.parent / "make.py").write_text(MAKE + "\n\ndef not_a_model():\n    return 3\n")
    assert main(["suggest", str(block), "--model", "make:not_a_model", "--inputs", "make:example_inputs"]) == 1
    assert capsys.readouterr().err.startswith(f"{block.parent / 'make.py'}:13:1: not_a_model() returned a int, ")


def test_a_model_function_that_needs_arguments_and_a_module_that_is_missing(block: Path, capsys) -> None:
    (block.parent / "make.py").write_text(MAKE + "\n\ndef needs(hidden):\n    return Block(Config(hidden))\n")
    assert main(["suggest", str(block), "--model", "make:needs", "--inputs", "make:example_inputs"]) == 1
    assert capsys.readouterr().err.startswith(
        f"{block.parent / 'make.py'}:13:1: function needs needs arguments (hidden); pass --model FILE.py:make_model"
    )
    assert main(["suggest", str(block), "--model", "nowhere_at_all:make", "--inputs", "make:example_inputs"]) == 1
    assert capsys.readouterr().err == (
        "--model nowhere_at_all:make: cannot import nowhere_at_all: No module named 'nowhere_at_all'\n"
    )
