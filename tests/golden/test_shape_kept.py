"""The user's code keeps its shape (CONTRACT section 2): on every golden case, example and corpus file, for every
target, no function gains or loses a parameter and no call of the user's gains an argument; and the generated
code keeps no state on a module it imports (no ``vars(torch.cuda)``, ``torchair.ops.x = ...``, ``setattr``)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest
from golden.cases_util import REPO, case_inputs, transform

from codegen.driver.run import read_sources, run
from codegen.targets import TARGETS

CASES = case_inputs()
CORPUS = sorted(p for p in (REPO / "tests" / "corpus").iterdir() if (p / "__init__.py").exists())


def _functions(tree: ast.AST, prefix: str = "") -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    found = {}
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                found[name] = node
            found.update(_functions(node, f"{name}."))
    return found


def _calls(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Counter[tuple[str, int, tuple[str, ...]]]:
    """The calls of the body (not the decorators, which the transform removes), with their arity."""
    return Counter((ast.unparse(c.func), len(c.args), tuple(sorted(str(k.arg) for k in c.keywords)))
                   for stmt in fn.body for c in ast.walk(stmt) if isinstance(c, ast.Call))


def _imported(tree: ast.Module) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
            for a in node.names}


def _foreign_state(source: str, generated: str) -> list[str]:
    """Writes the generated code makes into an imported module: ``vars(m)``, ``m.__dict__``, ``setattr(m, ...)``,
    ``m.attr = ...`` (``m`` any imported name the user's own source does not already write so)."""
    tree = ast.parse(generated)
    modules = _imported(tree)

    def rooted(node: ast.AST) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in modules

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("vars", "setattr") and node.args \
                and rooted(node.args[0]):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.Attribute) and node.attr == "__dict__" and rooted(node.value):
            found.append(ast.unparse(node))
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [ast.unparse(t) for t in targets if isinstance(t, ast.Attribute) and rooted(t.value)]
    return [f for f in found if f not in source]


def _assert_shape_kept(source: str, generated: str, where: str) -> None:
    assert not _foreign_state(source, generated), f"{where}: state on an imported module"
    before, after = _functions(ast.parse(source)), _functions(ast.parse(generated))
    for name, fn in before.items():
        assert name in after, f"{where}: {name} is gone"
        assert ast.unparse(after[name].args) == ast.unparse(fn.args), f"{where}: {name} changed its parameters"
        missing = _calls(fn) - _calls(after[name])
        assert not missing, f"{where}: {name}'s calls changed: {sorted(missing)}"


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("case_id,path", CASES, ids=[c for c, _ in CASES])
def test_golden_cases_keep_their_shape(target: str, case_id: str, path: Path) -> None:
    for result in transform(path, target):
        if not result.has_errors and result.code is not None:
            _assert_shape_kept(result.file.source or "", result.code, f"{result.file.path} ({target})")


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("entry", CORPUS, ids=[p.name for p in CORPUS])
def test_corpus_files_keep_their_shape(target: str, entry: Path) -> None:
    files = read_sources((str(p), str(entry)) for p in sorted(entry.glob("*.py")))
    for result in run(files, target=target, jobs=1):
        if not result.has_errors and result.code is not None:
            _assert_shape_kept(result.file.source or "", result.code, f"{result.file.path} ({target})")
