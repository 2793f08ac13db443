"""``suggest`` on five unannotated models: the proposal applies, checks clean, compiles race-free with the same
numbers, and ``schedule`` predicts for it the saving ``suggest`` promised."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from npudsl.cli import main

torch = pytest.importorskip("torch")
from npudsl.suggest import suggest  # noqa: E402
from suggest_checks import apply_suggestion, assert_checks_clean, assert_promised, assert_same_numbers  # noqa: E402

MODELS = Path(__file__).parent / "models"
PROPOSING = {
    "moe_shared.py": ("SharedExpert", "shared_expert"),
    "indexer.py": ("Indexer.keys", "keys"),
    "two_roles.py": (None, "left"),
}


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[object, Path]]:
    """Each proposing model's suggestion and the file with the proposal applied by ``git apply``."""
    root = tmp_path_factory.mktemp("applied")
    found = {}
    for name in PROPOSING:
        shutil.copy(MODELS / name, root / name)
        found[name] = (apply_suggestion(root / name), root / name)
    return found


@pytest.mark.parametrize("name", sorted(PROPOSING))
def test_the_proposal_is_where_a_person_would_put_it(applied, name: str) -> None:
    suggestion, path = applied[name]
    decorated, stream = PROPOSING[name]
    assert [m.stream for m in suggestion.plan.moves] == [stream]
    assert suggestion.edit.decorate == ({decorated: stream} if decorated else {})
    assert path.read_text() == suggestion.proposed
    assert "from npudsl import on_stream\n" in suggestion.proposed


def test_two_instances_in_different_roles_get_a_wrapper(applied) -> None:
    suggestion, _ = applied["two_roles.py"]
    assert '    @on_stream("left")\n    def _left(self, x):\n        return self.left(x)\n' in suggestion.proposed
    assert "a = self._left(x)\n        b = self.right(x)\n" in suggestion.proposed
    assert "on_stream" not in suggestion.proposed.split("class Model")[0].split("import on_stream")[1]


@pytest.mark.parametrize("name", sorted(PROPOSING))
def test_the_applied_proposal_checks_clean(applied, name: str, capsys) -> None:
    assert_checks_clean(applied[name][1])


@pytest.mark.parametrize("name", sorted(PROPOSING))
def test_schedule_predicts_the_promised_saving(applied, name: str) -> None:
    assert_promised(*applied[name])


@pytest.mark.parametrize("name", sorted(PROPOSING))
def test_the_applied_proposal_compiles_race_free_with_the_same_numbers(applied, name: str) -> None:
    assert_same_numbers(MODELS / name, applied[name][1])


@pytest.mark.parametrize("name", ["chain.py", "tiny_branch.py"])
def test_nothing_worth_moving_gives_no_diff_and_exit_0(tmp_path: Path, name: str, capsys) -> None:
    shutil.copy(MODELS / name, tmp_path / name)
    assert main(["suggest", str(tmp_path / name), "--diff"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "nothing worth moving" in err


def test_the_tiny_branch_is_refused_for_its_sync_cost_alone() -> None:
    refused = suggest(str(MODELS / "tiny_branch.py"))
    free = suggest(str(MODELS / "tiny_branch.py"), sync_cost=0.0)
    assert refused.plan.moves == () and not refused.changed
    assert [m.site.callee for m in free.plan.moves] == ["Model.flag"]
    assert 0 < free.plan.moves[0].gain < 2 * 0.001


def test_the_chain_has_units_but_none_can_overlap() -> None:
    chained = suggest(str(MODELS / "chain.py"), sync_cost=0.0)
    assert {u.instance.site.callee for u in chained.units} == {"Stage.forward", "Chain.scale"}
    assert chained.plan.moves == ()
