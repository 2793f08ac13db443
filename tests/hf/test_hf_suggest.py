"""``suggest`` on real Hugging Face MoE modeling files (tiny configs, CPU): it proposes the shared-expert overlap
with at least 95% of the hand annotation's predicted saving; the proposal applies, checks clean and compiles
race-free with the unmodified model's numbers; so does the hand-annotated file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")
sys.path.insert(0, str(Path(__file__).parents[1] / "suggest"))
from hf_models import ARCHITECTURES, hand_annotated, standalone  # noqa: E402
from npudsl.timeline import picture  # noqa: E402
from suggest_checks import apply_suggestion, assert_checks_clean, assert_same_numbers  # noqa: E402

NAMES = sorted(ARCHITECTURES)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    """Per architecture: the unmodified copy, the suggestion applied to a second copy, the hand-annotated copy."""
    found: dict[str, dict[str, object]] = {}
    for name in NAMES:
        arch, root = ARCHITECTURES[name], tmp_path_factory.mktemp(name)
        original = standalone(arch, root)
        (root / "suggested").mkdir()
        (root / "hand").mkdir()
        suggested = root / "suggested" / original.name
        suggested.write_text(original.read_text())
        found[name] = dict(
            original=original,
            suggestion=apply_suggestion(suggested),
            suggested=suggested,
            hand=hand_annotated(arch, original, root / "hand"),
        )
    return found


@pytest.mark.parametrize("name", NAMES)
def test_suggest_moves_the_shared_expert_for_most_of_the_hand_saving(files, name: str) -> None:
    suggestion, hand = files[name]["suggestion"], picture(str(files[name]["hand"])).schedule
    assert hand.saving > 0.01
    assert suggestion.plan.schedule.saving >= 0.95 * hand.saving  # type: ignore[attr-defined]
    moved = {m.site.callee for m in suggestion.plan.moves}  # type: ignore[attr-defined]
    assert f"{ARCHITECTURES[name].shared}.forward" in moved


@pytest.mark.parametrize("name", NAMES)
def test_the_applied_proposal_checks_clean(files, name: str) -> None:
    assert_checks_clean(files[name]["suggested"])  # type: ignore[arg-type]


@pytest.mark.parametrize("name", NAMES)
def test_the_hand_annotation_checks_clean(files, name: str) -> None:
    assert_checks_clean(files[name]["hand"])  # type: ignore[arg-type]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("version", ["suggested", "hand"])
def test_compiled_race_free_with_the_unmodified_models_numbers(files, name: str, version: str) -> None:
    assert_same_numbers(files[name]["original"], files[name][version])  # type: ignore[arg-type]


def test_deepseek_attention_expands_keys_and_values_beside_the_query(files) -> None:
    moves = {m.site.callee: m for m in files["deepseek_v3"]["suggestion"].plan.moves}  # type: ignore[attr-defined]
    assert set(moves) == {"DeepseekV3MLP.forward", "DeepseekV3Attention.expand_kv"}
    assert all(m.hoist is not None for m in moves.values())


@pytest.mark.parametrize("name", ["deepseek_v3", "glm4_moe", "dots1"])
def test_a_call_inside_the_joining_statement_gets_its_own_statement_above(files, name: str) -> None:
    proposed = files[name]["suggestion"].proposed  # type: ignore[attr-defined]
    assert "        hidden_states = hidden_states + shared_experts_out\n" in proposed
    above = proposed.index("        shared_experts_out = self.shared_experts(residuals)\n")
    assert above < proposed.index("        hidden_states = self.experts(")
