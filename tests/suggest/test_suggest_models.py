"""``suggest`` on five unannotated models: the proposal applies, checks clean, compiles race-free with the same
numbers, and ``schedule`` predicts for it the saving ``suggest`` promised."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from npudsl.cli import main

torch = pytest.importorskip("torch")
import npudsl  # noqa: E402
from npudsl.diffs import unified_diff  # noqa: E402
from npudsl.suggest import suggest  # noqa: E402
from npudsl.timeline import picture  # noqa: E402
from npudsl.timeline.capture import load_example, pick_model  # noqa: E402

MODELS = Path(__file__).parent / "models"
PROPOSING = {"moe_shared.py": ("SharedExpert", "shared_expert"), "indexer.py": ("Indexer.keys", "keys"),
             "two_roles.py": (None, "left")}


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[object, Path]]:
    """Each proposing model's suggestion and the file with the proposal applied by ``git apply``."""
    root = tmp_path_factory.mktemp("applied")
    found = {}
    for name in PROPOSING:
        shutil.copy(MODELS / name, root / name)
        suggestion = suggest(str(root / name))
        patch = unified_diff(suggestion.source, suggestion.proposed, name)
        subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=root, check=True)
        found[name] = (suggestion, root / name)
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
    assert main(["check", str(applied[name][1])]) == 0


@pytest.mark.parametrize("name", sorted(PROPOSING))
def test_schedule_predicts_the_promised_saving(applied, name: str) -> None:
    suggestion, path = applied[name]
    drawn = picture(str(path)).schedule
    assert drawn.saving > 0.05
    assert drawn.saving == pytest.approx(suggestion.plan.schedule.saving, abs=1e-9)
    assert drawn.serial == pytest.approx(suggestion.plan.before.serial, abs=1e-9)


@pytest.mark.parametrize("name", sorted(PROPOSING))
def test_the_applied_proposal_compiles_race_free_with_the_same_numbers(applied, name: str) -> None:
    original, changed = load_example(str(MODELS / name)), load_example(str(applied[name][1]))
    inputs = original.example_inputs()
    torch.manual_seed(0)
    expected = pick_model(original)(*inputs)
    torch.manual_seed(0)
    model = pick_model(changed)
    torch._dynamo.reset()
    actual = npudsl.compile(model, target="portable", fullgraph=True)(*inputs)  # raises on a race
    assert torch.equal(actual, expected)


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
