"""``suggest`` on the installed modeling file itself (imported under its package name, so its relative imports
work), with ``--model``/``--inputs`` naming functions in a file of the user's: the flow docs/huggingface.md
starts with. Nothing is written into site-packages."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from npudsl.cli import main

pytest.importorskip("transformers")

MAKE = """import torch
from transformers import Qwen2MoeConfig, Qwen2MoeModel


def make_model():
    config = Qwen2MoeConfig(vocab_size=64, hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
                            shared_expert_intermediate_size=128, num_experts=4, num_experts_per_tok=2,
                            num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2)
    config._experts_implementation = "batched_mm"
    return Qwen2MoeModel(config).eval()


def example_inputs():
    return (torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(0)),)
"""


def test_suggest_reads_the_installed_file_and_explains_every_call_site(tmp_path: Path, capsys) -> None:
    installed = Path(str(importlib.import_module("transformers.models.qwen2_moe.modeling_qwen2_moe").__file__))
    before = installed.read_text()
    make = tmp_path / "make_qwen2_moe.py"
    make.write_text(MAKE)
    assert (
        main(
            [
                "suggest",
                str(installed),
                "--model",
                f"{make}:make_model",
                "--inputs",
                f"{make}:example_inputs",
                "--explain",
                "--diff",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert '+@on_stream("shared_expert")\n class Qwen2MoeMLP(nn.Module):\n' in out
    assert (
        "  moved Qwen2MoeMLP.forward (line 343 of Qwen2MoeSparseMoeBlock.forward, 1 call): moved to stream "
        "'shared_expert': saves "
    ) in err
    assert (
        "  kept  Qwen2MoeSparseMoeBlock.forward (line 396 of Qwen2MoeDecoderLayer.forward, 1 call): it is "
        "inside, or holds, Qwen2MoeMLP.forward, already on stream 'shared_expert' (streams do not nest)"
    ) in err
    assert err.endswith("predicted saving 11.3%\n")
    assert installed.read_text() == before


def test_the_class_itself_needs_a_config_which_the_error_says_at_its_line(capsys) -> None:
    installed = str(importlib.import_module("transformers.models.qwen2_moe.modeling_qwen2_moe").__file__)
    assert main(["suggest", installed, "--model", "Qwen2MoeModel", "--inputs", "torch:randn"]) == 1
    err = capsys.readouterr().err
    line = Path(installed).read_text().splitlines().index("class Qwen2MoeModel(Qwen2MoePreTrainedModel):") + 1
    assert err == (
        f"{installed}:{line}:1: class Qwen2MoeModel needs arguments (config); pass --model "
        "FILE.py:make_model (or package.module:make_model), a function that returns the model\n"
    )
