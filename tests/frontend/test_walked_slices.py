"""A statement's walk is read from the kept walk of the function, class or module that holds it
(``codegen/index/walked.py``): the same nodes in ``ast.walk``'s order, and no tree kept alive by it.

Breadth first, the nodes under a statement are slices of its holder's walk, a slice a level; the index walks each
module it parses once, and every statement, function and class walked after is read from that walk.
"""

from __future__ import annotations

import ast
import copy
import gc
import pickle
import weakref
from pathlib import Path

import pytest

from codegen.index.walked import walked, walked_of

_REPO = Path(__file__).resolve().parents[2]
_SKIPPED = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
_FLOW = [p for p in sorted((_REPO / "codegen" / "lower" / "flow").glob("a*.py")) if not p.stem.endswith("_table")]
_FILES = sorted((_REPO / "examples").glob("*.py")) + _FLOW  # generated tables: a dict literal, nothing to walk


def _walk(node: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(node) if not isinstance(n, _SKIPPED)]


@pytest.mark.parametrize("path", _FILES, ids=lambda p: p.name)
def test_every_statement_walked_from_its_module_walks_as_ast_walk(path: Path) -> None:
    tree = ast.parse(path.read_text())
    assert list(walked(tree)) == _walk(tree)
    inner = [n for n in ast.walk(tree) if isinstance(n, (ast.stmt, ast.arguments, ast.expr))]
    assert len(inner) > 50
    for node in inner:
        found = walked(node)
        assert len(found) == len(_walk(node)) and all(a is b for a, b in zip(found, _walk(node)))


def test_a_function_walked_after_its_statements_and_before_its_class() -> None:
    tree = ast.parse("class A:\n    def f(self, x):\n        if x:\n            y = x + 1\n        return y\n")
    fn = tree.body[0].body[0]  # type: ignore[attr-defined]
    statement = fn.body[0]
    assert list(walked(statement)) == _walk(statement)
    assert list(walked(fn)) == _walk(fn)
    assert list(walked(tree)) == _walk(tree)
    assert [type(n) for n in walked_of(fn.body[0], ast.Name)] == [ast.Name, ast.Name, ast.Name]


def test_a_statement_kept_does_not_keep_its_module() -> None:
    tree = ast.parse("def f(x):\n    y = x + 1\n    return y\n")
    walked(tree)
    statement = tree.body[0].body[0]  # type: ignore[attr-defined]
    gone = weakref.ref(tree)
    del tree
    gc.collect()
    assert gone() is None
    assert list(walked(statement)) == _walk(statement)  # walked afresh: its module's walk is gone


def test_a_copy_reordered_is_not_read_from_its_original_place() -> None:
    tree = ast.parse("def f(x):\n    y = x + 1\n    z = y * 2\n    return z\n")
    walked(tree)
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    moved = copy.copy(fn)
    moved.body = [fn.body[1], fn.body[0], fn.body[2]]
    assert [n.lineno for n in walked_of(moved, ast.stmt)] == [1, 3, 2, 4]
    assert [n.lineno for n in walked_of(fn, ast.stmt)] == [1, 2, 3, 4]
    assert list(walked(fn.body[1])) == _walk(fn.body[1])


def test_a_walked_tree_pickles_and_walks_alike_after() -> None:
    """A spawned worker gets the index's trees pickled: their places do not travel, the walks do."""
    tree = ast.parse("class A:\n    def f(self, x):\n        y = x + 1\n        return y\n")
    walked(tree)
    again = pickle.loads(pickle.dumps(tree))
    statement = again.body[0].body[0].body[0]
    assert list(walked(statement)) == _walk(statement)
    assert [type(n) for n in walked(again)] == [type(n) for n in _walk(tree)]
