"""Every registered target is a folder with its spelling, its backend and the traits the checks and
``npudsl.compile`` read; those read the traits, never a target's name.

The second half registers a scratch target (``portable``'s spelling under another name, one trait changed)
and shows each reader follow the trait: what adding a target needs is its folder and one registry line.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import attrs
import pytest

import npudsl
from codegen.check.rules.pipeline import check_source
from codegen.index.index import build_index
from codegen.targets import NAMES, TARGETS, Spelling, Target, get_target
from codegen.targets.base import CompileArgs
from npudsl import codes
from npudsl.devices import DEFAULT_DEVICE
from npudsl.errors import NpudslError

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "check" / "cases"
TRAITS = ("event_sync", "joins_every_stream", "nests_stream_scopes", "graph_options")


def test_the_registry_is_the_names_and_nothing_else() -> None:
    assert list(TARGETS) == list(NAMES)
    folders = {p.name for p in (ROOT / "codegen" / "targets").iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_target_is_its_folder_with_every_trait(name: str) -> None:
    target = TARGETS[name]
    assert isinstance(target, Target) and target is importlib.import_module(f"codegen.targets.{name}").TARGET
    assert target.name == name
    assert all(type(getattr(target, trait)) is bool for trait in TRAITS)
    assert callable(target.backend) and callable(target.diagnose)
    assert target.spelled_by.__module__ == f"codegen.targets.{name}.spelling"
    assert target.backend.__module__ == f"codegen.targets.{name}.backend"
    assert isinstance(target.spelled_by, type) and issubclass(target.spelled_by, Spelling)


def test_every_trait_must_be_stated() -> None:
    fields = {f.name for f in attrs.fields(Target) if f.default is attrs.NOTHING}
    assert set(TRAITS) <= fields


def test_the_traits_say_what_the_rules_said_by_name() -> None:
    """The behaviour of the lists of names the checks and npudsl.compile held before, for those targets (a
    target added later is not pinned here)."""
    before = ("aclgraph", "cuda", "ge", "npugraph_ex", "portable")
    by = {trait: {name for name in before if getattr(TARGETS[name], trait)} for trait in TRAITS}
    assert by["joins_every_stream"] == {"cuda", "npugraph_ex"}
    assert by["nests_stream_scopes"] == {"aclgraph", "ge"}
    assert by["graph_options"] == {"aclgraph", "npugraph_ex", "portable"}
    assert by["event_sync"] == {"aclgraph", "cuda", "npugraph_ex", "portable"}


def _codes(case: str, target: str) -> set[str]:
    source = (CASES / case).read_text(encoding="utf-8")
    index = build_index([("case", source)])
    found = check_source(source, path=case, module_name="case", index=index, target=target, device=DEFAULT_DEVICE)
    return {d.code for d in found}


def _scratch_backend(options: dict[str, object]) -> CompileArgs:
    raise NpudslError("the scratch target has no backend")


@pytest.fixture
def scratch(monkeypatch: pytest.MonkeyPatch) -> Target:
    """A target named "scratch": portable's spelling, registered for the test only."""
    target = attrs.evolve(TARGETS["portable"], name="scratch", backend=_scratch_backend)
    monkeypatch.setitem(TARGETS, "scratch", target)
    return target


@pytest.mark.parametrize(
    ("trait", "case", "code"),
    [
        ("joins_every_stream", "npd511_unjoined_stream_bad.py", codes.UNJOINED_STREAM),
        ("nests_stream_scopes", "npd504_default_nested_bad.py", codes.DEFAULT_NESTED),
        ("event_sync", "npd512_ge_event_runs_bad.py", codes.GE_EVENT_RUNS),
    ],
)
def test_a_check_follows_the_trait_of_a_new_target(
    scratch: Target, monkeypatch: pytest.MonkeyPatch, trait: str, case: str, code: str
) -> None:
    fires = trait != "event_sync"  # NPD512 speaks for the targets *without* event_sync
    monkeypatch.setitem(TARGETS, "scratch", attrs.evolve(scratch, **{trait: fires}))
    assert code in _codes(case, "scratch")
    monkeypatch.setitem(TARGETS, "scratch", attrs.evolve(scratch, **{trait: not fires}))
    assert code not in _codes(case, "scratch")


def test_npudsl_compile_reads_the_registry(scratch: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(NpudslError, match="the scratch target has no backend"):
        npudsl.compile(object(), target="scratch")
    monkeypatch.setitem(TARGETS, "scratch", attrs.evolve(scratch, graph_options=False))
    with pytest.raises(NpudslError, match=r"apply to targets 'aclgraph', 'npugraph_ex', 'portable' only"):
        npudsl.compile(object(), target="scratch", clone_inputs=False)
    with pytest.raises(NpudslError, match="unknown target 'nowhere'"):
        npudsl.compile(object(), target="nowhere")
    assert get_target("scratch").name == "scratch"
