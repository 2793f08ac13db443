"""Every in-place, ``out=`` and view-then-write spelling: the checker names both lines of each broken pair
and passes each correct one, whose numbers equal the model run eagerly on one stream.

One model per table holds a pair per spelling (see ``spellings``), so a table costs two compiles.
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from helpers import marked_line  # noqa: E402
from npudsl import StreamRaceError  # noqa: E402
from npudsl.race import npudsl_backend  # noqa: E402
from spellings import HAND, Spelling, model_source, registry_spellings  # noqa: E402

TABLES = {"hand": HAND, "registry": registry_spellings()}
CASES = [(table, name) for table, spellings in TABLES.items() for name in spellings]


def _load(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[types.ModuleType, str]]:
    """Per table: its module, and the checker's message for the broken variant."""
    found = {}
    for table, spellings in TABLES.items():
        path = tmp_path_factory.mktemp("race") / f"spelling_{table}.py"
        path.write_text(model_source(spellings))
        module = _load(path)
        torch._dynamo.reset()
        with pytest.raises(StreamRaceError) as caught:
            torch.compile(module.Model(False), backend=npudsl_backend, fullgraph=True)(torch.randn(3, 4))
        found[table] = (module, str(caught.value))
    return found


@pytest.mark.parametrize(("table", "name"), CASES, ids=[f"{t}-{n}" for t, n in CASES])
def test_the_broken_pair_is_reported_naming_both_lines(models: dict, table: str, name: str) -> None:
    module, message = models[table]
    read, write = marked_line(module.__file__, f"P:{name}"), marked_line(module.__file__, f"C:{name}")
    assert any(read in line and write in line for line in message.splitlines()), (read, write, message[:2000])


@pytest.mark.parametrize("table", sorted(TABLES))
def test_the_correct_pairs_pass_and_equal_one_stream(models: dict, table: str) -> None:
    module, _ = models[table]
    x = torch.randn(3, 4)
    torch.manual_seed(0)
    compiled = torch.compile(module.Model(True), backend=npudsl_backend, fullgraph=True)(x)
    torch.manual_seed(0)
    eager = module.Model(True)(x)
    torch.testing.assert_close(compiled, eager, rtol=0, atol=0, equal_nan=True)


def test_the_table_is_large_and_every_broken_model_reports_each_pair_once(models: dict) -> None:
    assert len(HAND) + len(registry_spellings()) >= 40
    assert all(isinstance(s, Spelling) for s in HAND.values())
    for table, (_, message) in models.items():
        assert len(message.splitlines()) == len(TABLES[table])
