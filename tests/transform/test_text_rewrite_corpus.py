"""The text rewrite prints what libcst prints on the corpus models, hoisted calls and backslash lines included.

Each corpus entry's model files are transformed as one run, for every target, twice: through the text
rewrite, and with every unit sent through libcst. The entries whose callers the planner reorders
(``CallerPlan.moves``, ``codegen/rewrite/textmoved.py``) are also transformed with blank and comment lines put
above their lines (what a moved call leaves behind), and must take the text path: a caller with a hoist sent
its whole class through libcst before, about a sixth of a decorated run.
"""

from __future__ import annotations

import ast
import random
from typing import Any

import attrs
import pytest
from corpus.registry import ENTRIES, Entry

from codegen.driver import api
from codegen.driver.reading import SourceFile
from codegen.driver.run import read_sources, run
from codegen.rewrite import splice, textunit

_TARGETS = ["aclgraph", "ge", "npugraph_ex", "cuda", "portable"]


def _leads(text: str, seed: int) -> str:
    """``text`` with blank and comment lines above some of its lines (at their indentation, or half of it)."""
    rng = random.Random(seed)
    out, previous = [], ""
    for line in text.splitlines(keepends=True):
        if line.strip() and not previous.rstrip("\r\n").endswith("\\") and rng.random() < 0.3:
            indent = line[: len(line) - len(line.lstrip())]
            half = indent[: len(indent) // 2]
            out.append(rng.choice(["\n", f"{indent}# lead\n", f"{half}# half\n", f"{indent}# a\n{indent}\n"]))
        out.append(line)
        previous = line
    return "".join(out)


def _files(entry: Entry, seed: int | None) -> list[SourceFile]:
    files = read_sources((str(p), str(entry.path)) for p in entry.model_files)
    if seed is None:
        return files
    return [attrs.evolve(f, source=_leads(f.source or "", seed + i)) for i, f in enumerate(files)]


def _outputs(files: list[SourceFile], target: str) -> dict[str, str | None]:
    return {r.file.path: r.code for r in run(files, target=target, jobs=1)}


def _both(files: list[SourceFile], target: str, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    text = _outputs(files, target)
    with monkeypatch.context() as patched:
        patched.setattr(splice, "rewrite_unit", lambda *_: None)
        return text, _outputs(files, target)


def _moving(entry: Entry) -> bool:
    """Whether the planner moves a call of the entry (for the aclgraph target)."""
    found: list[bool] = []
    real = api.lower

    def seen(*args: Any, **kwargs: Any) -> Any:
        lowered = real(*args, **kwargs)
        found.extend(bool(caller.moves) for caller in lowered[0].callers.values())
        return lowered

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(api, "lower", seen)
        _outputs(_files(entry, None), "aclgraph")
    return any(found)


_MOVING = [entry for entry in ENTRIES if entry.name in ("omni_decode_six_streams", "vllm_dsv4_dsa_overlap")]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_corpus_text_rewrite_prints_as_libcst(entry: Entry, monkeypatch: pytest.MonkeyPatch) -> None:
    for target in _TARGETS:
        text, libcst = _both(_files(entry, None), target, monkeypatch)
        assert text == libcst, target


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("entry", _MOVING, ids=lambda e: e.name)
def test_moved_calls_with_lines_above_print_as_libcst(entry: Entry, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    for target in _TARGETS:
        text, libcst = _both(_files(entry, seed), target, monkeypatch)
        assert text == libcst, target


def test_callers_with_moved_calls_take_the_text_path() -> None:
    assert len(_MOVING) == 2 and all(_moving(entry) for entry in _MOVING)
    taken: list[bool] = []
    real = textunit.rewrite_unit

    def counted(*args: object) -> str | None:
        found = real(*args)  # type: ignore[arg-type]
        if isinstance(getattr(args[0], "node", None), ast.ClassDef):
            taken.append(found is not None)
        return found

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(splice, "rewrite_unit", counted)
        for entry in _MOVING:
            _outputs(_files(entry, None), "aclgraph")
    assert taken and all(taken)
