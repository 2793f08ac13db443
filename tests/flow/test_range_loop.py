"""One reading of ``for i in range(n)`` (``codegen/lower/flow/loop_count.py``), each rule asking its own premise.

``slot_loops.py`` (a micro-batch's join slots) needs ``n`` to hold one value from before the loop to the function's
end; ``next_iteration.py`` (keeps only a next iteration needs) a constant or ``n = len(...)`` outside the loop;
``last_iteration.py`` a count the body does not rebind. Before, each read the loop itself; these pin the answers
of the one reader on the shapes that tell the premises apart.
"""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow.last_iteration import another
from codegen.lower.flow.loop_count import range_loop


def _fn(body: str) -> ast.FunctionDef:
    source = "def f(xs, k):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    fn = ast.parse(source).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return fn


def _loop(fn: ast.FunctionDef) -> ast.For:
    return next(n for n in ast.walk(fn) if isinstance(n, ast.For))


@pytest.mark.parametrize(
    ("body", "once", "length", "kept"),
    [
        ("n = len(xs)\nfor i in range(n):\n    pass", True, True, True),  # every premise holds
        ("for i in range(k):\n    pass", True, False, True),  # a parameter: bound once, not a length
        ("for i in range(4):\n    pass", False, True, True),  # a constant: no name to hold
        ("n = len(xs)\nn = n - 1\nfor i in range(n):\n    pass", False, False, True),  # bound twice
        ("n = len(xs) - 1\nfor i in range(n):\n    pass", True, False, True),  # bound once, not by len()
        ("n = len(xs)\nfor i in range(n):\n    n = 2", False, False, False),  # the body rebinds it
    ],
)
def test_each_premise_of_the_count(body: str, once: bool, length: bool, kept: bool) -> None:
    fn = _fn(body)
    found = range_loop(_loop(fn))
    assert found is not None and found.index == "i"
    statements = [n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n is not fn]
    assert (found.bound_once(fn), found.a_length(statements), found.count_kept()) == (once, length, kept)


@pytest.mark.parametrize(
    "loop",
    ["for i in range(0, n):", "for i in range(n, step=1):", "for i, x in range(n):", "for i in rng(n):"],
)
def test_only_range_of_one_argument_into_a_name(loop: str) -> None:
    assert range_loop(_loop(_fn(f"n = len(xs)\n{loop}\n    pass"))) is None


def test_an_index_the_body_rebinds_counts_nothing() -> None:
    fn = _fn("n = len(xs)\nfor i in range(n):\n    i = 0")
    found = range_loop(_loop(fn))
    assert found is not None and not found.index_kept()
    assert another(_loop(fn), None, frozenset()) == ""  # the last iteration's test is unknown


def test_the_last_iteration_reads_the_count_as_written() -> None:
    assert another(_loop(_fn("for j in range(3):\n    pass")), None, frozenset()) == "j + 1 < 3"
    assert another(_loop(_fn("for j in range(k):\n    pass")), None, frozenset()) == "j + 1 < k"
