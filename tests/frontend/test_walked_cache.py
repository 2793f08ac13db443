"""The kept walks and per-node answers (``codegen/index/walked.py``) die with their tree, and a copy of a node
does not take the original's answers.

A run's trees were kept alive by their own cached walks (a weak dictionary's value, the walk, starts with its
key), so every ``npudsl.compile`` or bench run kept the last one's trees and the heap grew run after run.
"""

from __future__ import annotations

import ast
import copy
import gc
import weakref

from codegen.index.walked import per_node, walked, walked_of

SOURCE = """
def f(x):
    y = x + 1
    z = y * 2
    return z
"""


def _dies_after(use: object) -> bool:
    tree = ast.parse(SOURCE)
    gone = weakref.ref(tree)
    use(tree)  # type: ignore[operator]
    del tree
    gc.collect()
    return gone() is None


def test_a_walked_tree_dies_with_its_last_reference() -> None:
    assert _dies_after(walked)
    assert _dies_after(lambda tree: walked_of(tree, ast.FunctionDef))
    assert _dies_after(lambda tree: walked_of(tree.body[0], (ast.FunctionDef, ast.Return)))


def test_an_answer_that_holds_its_node_dies_with_it() -> None:
    @per_node
    def itself(node: ast.AST) -> list[ast.AST]:
        return [node]

    assert _dies_after(itself)


def test_the_walk_is_kept() -> None:
    tree = ast.parse(SOURCE)
    assert walked(tree) is walked(tree)
    assert walked_of(tree, ast.Assign) is walked_of(tree, ast.Assign)
    assert [type(n) for n in walked(tree)] == [
        type(n) for n in ast.walk(tree) if not isinstance(n, (ast.expr_context, ast.operator))
    ]


def test_a_copy_reordered_walks_its_own_body() -> None:
    fn = ast.parse(SOURCE).body[0]
    assert isinstance(fn, ast.FunctionDef)
    before = [n.lineno for n in walked_of(fn, ast.stmt)]
    moved = copy.copy(fn)
    moved.body = [fn.body[1], fn.body[0], fn.body[2]]
    assert [n.lineno for n in walked_of(moved, ast.stmt)] == [2, 4, 3, 5]
    assert walked(moved)[0] is moved
    assert [n.lineno for n in walked_of(fn, ast.stmt)] == before == [2, 3, 4, 5]
