"""The text rewrite prints statements that share a line as libcst prints them (``codegen/rewrite/textjoined.py``).

Each corpus entry's models are rewritten with some of their statements joined: two simple statements of a block
on one line with ``;`` (a comment after some), and a block of one simple statement put after its header's ``:``
(``if c: y = f(x)``, a comment after some). Both rewrites, the text one and libcst's, must print the same for
every target, and the units with such lines must take the text path (``vllm_w8a8_shared``'s ``W8A8Layer`` went
through libcst before).
"""

from __future__ import annotations

import ast
import pathlib
import random

import attrs
import pytest
from corpus.registry import ENTRIES, Entry

from codegen.driver.reading import SourceFile
from codegen.driver.run import read_sources, run
from codegen.rewrite import splice, textunit

_TARGETS = ["aclgraph", "ge", "npugraph_ex", "cuda", "portable"]
_HEADERS = (ast.If, ast.For, ast.While, ast.With)


def _simple(stmt: ast.stmt) -> bool:
    return not hasattr(stmt, "body") and not isinstance(stmt, ast.Match) and stmt.end_lineno == stmt.lineno


def _joins(tree: ast.Module, lines: list[str], rng: random.Random) -> dict[int, str]:
    """Line -> what joins it to the line before (``; `` or `` ``), for some pairs of lines of function bodies."""
    found: dict[int, str] = {}
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for node in ast.walk(fn):
            body = getattr(node, "body", None)
            if not isinstance(body, list):
                continue
            for a, b in zip(body, body[1:]):
                if _simple(a) and _simple(b) and b.lineno == a.lineno + 1 and rng.random() < 0.3:
                    found.setdefault(b.lineno, "; ")
            if isinstance(node, _HEADERS) and len(body) == 1 and _simple(body[0]) and rng.random() < 0.6:
                if body[0].lineno == node.lineno + 1 and lines[node.lineno - 1].rstrip().endswith(":"):
                    found[body[0].lineno] = " "
    return found


def _joined(text: str, seed: int) -> str:
    """``text`` with some statements sharing a line (see the module's docstring)."""
    rng = random.Random(seed)
    lines = text.splitlines(keepends=True)
    joins = _joins(ast.parse(text), lines, rng)
    out: list[str] = []
    for n, line in enumerate(lines, 1):
        if n in joins and "#" not in out[-1]:
            out[-1] = out[-1].rstrip("\r\n") + joins[n] + line.lstrip()
        else:
            out.append(line)
        if n + 1 not in joins and line.strip() and "#" not in line and rng.random() < 0.1:
            out[-1] = out[-1].rstrip("\r\n") + "  # note\n"
    return "".join(out)


def _files(entry: Entry, seed: int) -> list[SourceFile]:
    files = read_sources((str(p), str(entry.path)) for p in entry.model_files)
    return [attrs.evolve(f, source=_joined(f.source or "", seed + i)) for i, f in enumerate(files)]


def _outputs(files: list[SourceFile], target: str) -> dict[str, str | None]:
    return {r.file.path: r.code for r in run(files, target=target, jobs=1)}


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_joined_statements_print_as_libcst(entry: Entry, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _files(entry, seed)
    for target in _TARGETS:
        text = _outputs(files, target)
        with monkeypatch.context() as patched:
            patched.setattr(splice, "rewrite_unit", lambda *_: None)
            assert text == _outputs(files, target), target


def test_a_caller_with_joined_lines_takes_the_text_path(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = next(e for e in ENTRIES if e.name == "vllm_w8a8_shared")
    taken: dict[str, bool] = {}
    real = textunit.rewrite_unit

    def counted(*args: object) -> str | None:
        found = real(*args)  # type: ignore[arg-type]
        taken[getattr(args[0].node, "name", "")] = found is not None  # type: ignore[attr-defined]
        return found

    monkeypatch.setattr(splice, "rewrite_unit", counted)
    for target in _TARGETS:
        taken.clear()
        _outputs(read_sources((str(p), str(entry.path)) for p in entry.model_files), target)
        assert taken["W8A8Layer"], target


_EPILOGUE = """import torch
from torch import nn

from npudsl import keep_output, on_stream, records


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    @on_stream("side", sync="manual")
    @records("done")
    @keep_output
    def side(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x)
        y = y * 2; y = y + 1
        return y
"""


@pytest.mark.parametrize("target", _TARGETS)
def test_a_joined_line_before_an_epilogue_prints_once(target: str, tmp_path: pathlib.Path) -> None:
    """The steps before a ``return`` (``textreturns``) printed a ``;`` line once per statement on it: ``y = y * 2;
    y = y + 1`` ran twice."""
    path = tmp_path / "joined_epilogue.py"
    path.write_text(_EPILOGUE)
    (result,) = run(read_sources([(str(path), str(tmp_path))]), target=target, jobs=1)
    assert result.code is not None and result.code.count("y = y * 2; y = y + 1\n") == 1
