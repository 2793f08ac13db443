"""The text rewrite (``codegen.rewrite.textunit``) prints what libcst prints, byte for byte.

Every decorated example and golden case, as written and with blank, whitespace-only and
comment lines put between its lines at random depths, trailing comments on block headers
and decorators, CRLF, tabs and two-space indents, is transformed for every target twice:
through the text rewrite, and with every unit sent through libcst instead.
"""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path
from typing import Any

import libcst as cst
import pytest

from codegen.driver.api import transform_source
from codegen.lower.hygiene import ModuleNames
from codegen.rewrite import splice, textunit
from codegen.rewrite.astnames import names_read
from codegen.rewrite.walk import names_read as cst_names_read
from codegen.targets import get_target

_REPO = Path(__file__).resolve().parents[2]
_TARGETS = ["aclgraph", "ge", "npugraph_ex", "cuda", "portable"]
_INPUTS = sorted(
    p
    for p in [*(_REPO / "examples").rglob("*.py"), *(_REPO / "tests" / "golden" / "cases").glob("*.py")]
    if "npudsl" in p.read_text(encoding="utf-8")
)


def _noisy(text: str, seed: int) -> str:
    rng = random.Random(seed)
    out = []
    for line in text.splitlines(keepends=True):
        out.append(line)
        if rng.random() < 0.25:
            indent = " " * rng.choice([0, 2, 4, 6, 8, 10, 12, 16])
            out.append(rng.choice(["\n", f"{indent}\n", f"{indent}# noise\n", f"{indent}# noise  \n"]))
    return "".join(out)


def _tails(text: str) -> str:
    def tail(match: re.Match[str]) -> str:
        line = match.group(0)
        return line if "#" in line or "'" in line or '"' in line[:-1] else f"{line}  # tail"

    return re.sub(r"(?m)^[ \t]*(?:@.*|.*:)$", tail, text)


def _reindented(text: str, unit: str) -> str:
    return re.sub(r"(?m)^((?:    )+)", lambda m: unit * (len(m.group(1)) // 4), text)


_VARIANTS = {
    "as written": lambda t: t,
    "noise": lambda t: _noisy(t, len(t)),
    "noise and tails": lambda t: _tails(_noisy(t, len(t) + 1)),
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "tabs": lambda t: _reindented(t, "\t"),
    "two spaces": lambda t: _reindented(t, "  "),
}


def _both(source: str, target: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    text = transform_source(source, path="m.py", target=target)
    with monkeypatch.context() as patched:
        patched.setattr(splice, "rewrite_unit", lambda *_: None)
        return text, transform_source(source, path="m.py", target=target)


@pytest.mark.parametrize("variant", sorted(_VARIANTS))
@pytest.mark.parametrize("path", _INPUTS, ids=lambda p: p.name)
def test_text_rewrite_prints_as_libcst(path: Path, variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _VARIANTS[variant](path.read_text(encoding="utf-8"))
    for target in _TARGETS:
        text, libcst = _both(source, target, monkeypatch)
        assert text == libcst, target


def test_the_text_rewrite_takes_the_examples() -> None:
    """Most decorated classes go through the text path (else the speed is gone, not the output)."""
    taken: list[bool] = []
    real = textunit.rewrite_unit

    def counted(*args: object) -> str | None:
        found = real(*args)  # type: ignore[arg-type]
        if isinstance(getattr(args[0], "node", None), (ast.ClassDef, ast.FunctionDef)):
            taken.append(found is not None)
        return found

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(splice, "rewrite_unit", counted)
        for path in _INPUTS:
            transform_source(path.read_text(encoding="utf-8"), path="m.py", target="aclgraph")
    assert sum(taken) >= 0.8 * len(taken)


@pytest.mark.parametrize("path", _INPUTS[:20], ids=lambda p: p.name)
def test_names_read_from_ast_are_libcst_names(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert names_read(ast.parse(source)) == cst_names_read(cst.parse_module(source))


_ASKED = ("statements", "with_item", "construct_lines", "helper_source", "define_event", "event_comment")


def _asked(source: str, target: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """What the target's spelling is asked, first asks in order (it remembers its helpers and streams so)."""
    log: list[tuple[str, str]] = []
    spelling_class = type(get_target(target).spelling(ModuleNames(ast.parse(""))))
    with monkeypatch.context() as patched:
        for kind in spelling_class.__mro__:
            for name in _ASKED:
                if name in vars(kind):
                    real = getattr(kind, name)
                    patched.setattr(kind, name, _logged(real, name, log))
        transform_source(source, path="m.py", target=target)
    return list(dict.fromkeys(log))


def _logged(real: Any, name: str, log: list[tuple[str, str]]) -> Any:
    def asked(self: object, *args: object) -> object:
        log.append((name, repr(args)))
        return real(self, *args)

    return asked


@pytest.mark.parametrize("target", _TARGETS)
def test_the_target_is_asked_in_libcsts_order(target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for path in _INPUTS:
        source = path.read_text(encoding="utf-8")
        text = _asked(source, target, monkeypatch)
        monkeypatch.setattr(splice, "rewrite_unit", lambda *_: None)
        assert text == _asked(source, target, monkeypatch), path.name
        monkeypatch.undo()
