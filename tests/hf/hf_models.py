"""Real Hugging Face MoE modeling files as npudsl users meet them: the installed file copied as it is (its
relative imports made absolute, so the copy imports on its own), a tiny config built in code and a ``Model``
wrapper with ``example_inputs()`` appended; nothing is downloaded. ``hand`` is the annotation a person writes:
the shared expert's class on a side stream, its call moved first where the file calls it last (and DeepSeek's
key/value expansion beside the query)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import attrs

__all__ = ["ARCHITECTURES", "Architecture", "hand_annotated", "standalone"]

_BASE = dict(
    vocab_size=64,
    hidden_size=64,
    intermediate_size=128,
    moe_intermediate_size=32,
    num_hidden_layers=1,
    num_attention_heads=4,
    num_key_value_heads=2,
    num_experts_per_tok=2,
)
_GROUPED = dict(first_k_dense_replace=0, n_group=1, topk_group=1, n_routed_experts=4, n_shared_experts=2)
_LAST = (
    "        hidden_states = hidden_states + self.shared_experts(residuals)\n",
    "        hidden_states = hidden_states + shared_out\n",
)
_FIRST = (
    "        residuals = hidden_states\n",
    "        residuals = hidden_states\n        shared_out = self.shared_experts(residuals)\n",
)

# DeepSeek's attention: expanding the key/value latents does not need the query, so it runs beside its concat.
_ATTENTION = (
    ("    def expand_kv(", '    @on_stream("kv")\n    def expand_kv('),
    (
        "        query_states = torch.cat((q_pass, q_rot), dim=-1)\n\n"
        "        key_states, value_states = self.expand_kv(kv_nope, k_rot)\n",
        "        key_states, value_states = self.expand_kv(kv_nope, k_rot)\n"
        "        query_states = torch.cat((q_pass, q_rot), dim=-1)\n",
    ),
)


@attrs.frozen
class Architecture:
    package: str  # transformers.models.<package>
    config: str
    model: str
    options: dict[str, object]
    shared: str  # the shared expert's class
    moves: tuple[tuple[str, str], ...] = ()  # the hand-written move of its call: (old, new) text, each once


ARCHITECTURES = {
    a.package: a
    for a in [
        Architecture(
            "qwen2_moe",
            "Qwen2MoeConfig",
            "Qwen2MoeModel",
            dict(num_experts=4, shared_expert_intermediate_size=128),
            "Qwen2MoeMLP",
        ),
        Architecture(
            "deepseek_v3",
            "DeepseekV3Config",
            "DeepseekV3Model",
            dict(_GROUPED, q_lora_rank=32, kv_lora_rank=16, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16),
            "DeepseekV3MLP",
            (_LAST, _FIRST, *_ATTENTION),
        ),
        Architecture("glm4_moe", "Glm4MoeConfig", "Glm4MoeModel", _GROUPED, "Glm4MoeMLP", (_LAST, _FIRST)),
        Architecture("dots1", "Dots1Config", "Dots1Model", _GROUPED, "Dots1MLP", (_LAST, _FIRST)),
        Architecture(
            "ernie4_5_moe",
            "Ernie4_5_MoeConfig",
            "Ernie4_5_MoeModel",
            dict(moe_num_experts=4, moe_num_shared_experts=2, moe_k=2, moe_layer_start_index=0),
            "Ernie4_5_MoeMLP",
        ),
        Architecture(
            "hunyuan_v1_moe",
            "HunYuanMoEV1Config",
            "HunYuanMoEV1Model",
            dict(num_experts=4, moe_topk=2, num_shared_expert=1, head_dim=16),
            "HunYuanMoEV1MLP",
        ),
    ]
}

_TAIL = """

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = {config}(**{options!r})
        config._experts_implementation = "batched_mm"  # the experts loop breaks the graph (docs/huggingface.md)
        self.model = {model}(config)

    def forward(self, input_ids):
        return self.model(input_ids=input_ids).last_hidden_state


def example_inputs():
    torch.manual_seed(0)
    return (torch.randint(0, 64, (2, 8)),)
"""


def standalone(arch: Architecture, folder: Path) -> Path:
    """``modeling_<package>.py`` copied into ``folder``, importable on its own, with the model appended."""
    module = importlib.import_module(f"transformers.models.{arch.package}.modeling_{arch.package}")
    source = Path(str(module.__file__)).read_text()
    source = re.sub(r"^from \.\.\. import", "from transformers import", source, flags=re.M)
    source = re.sub(r"^from \.\.\.", "from transformers.", source, flags=re.M)
    source = re.sub(r"^from \.(?=\w)", f"from transformers.models.{arch.package}.", source, flags=re.M)
    path = folder / f"modeling_{arch.package}.py"
    path.write_text(source + _TAIL.format(config=arch.config, model=arch.model, options={**_BASE, **arch.options}))
    return path


def hand_annotated(arch: Architecture, original: Path, folder: Path) -> Path:
    """The copy annotated by hand: ``@on_stream("shared")`` on the shared expert's class, its call moved first."""
    source = original.read_text()
    for old, new in (
        (f"\nclass {arch.shared}(", f'\n@on_stream("shared")\nclass {arch.shared}('),
        ("\nimport torch\n", "\nimport torch\nfrom npudsl import on_stream\n"),
        *arch.moves,
    ):
        assert source.count(old) == 1, (arch.package, old)
        source = source.replace(old, new)
    path = folder / original.name
    path.write_text(source)
    return path
