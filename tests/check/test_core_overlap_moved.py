"""NPD302 reads the schedule the transform writes, moved calls included.

The planner may issue a later call on a side stream in the block of the call before it on that stream, above
main-stream work that does not touch it (``codegen/lower/flow/hoist.py``, ``CallerPlan.moves``). The moved call
then runs while that work runs, and ``pending_points`` walks the function in that order: the call is pending at
the statements it moved above, and a core limit issued there meets it. A call the planner leaves in place (it
reads what that work made) is pending only from its own statement on, as before.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest
import torch

from check_cases import CASES, actual, expected
from codegen.frontend.collect import collect
from codegen.index.index import build_index
from codegen.lower.flow.pending_points import pending_points
from codegen.lower.flow.state import State
from test_core_overlap_timeline import _checked, _meeting

MOVED = CASES / "npd302_hoisted_bad.py"
KEPT = CASES / "npd302_not_hoisted_ok.py"


def _forward_points(case: Path) -> tuple[dict[str, ast.stmt], dict[ast.stmt, State], int]:
    """The forward's statements by their first line's text, the state each one's work runs in, and the rope's
    site index."""
    source = case.read_text()
    tree = ast.parse(source)
    ir = collect(tree, source, path="m.py", module_name="m").ir
    points = pending_points(ir, tree, build_index([("m", source)]), source)["Attention.forward"]
    forward = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    stmts = {ast.unparse(s).split("\n")[0]: s for s in forward.body}
    rope = next(s.index for s in points.sites if s.stmt is next(v for k, v in stmts.items() if "kv_rope" in k))
    return stmts, points.during, rope


def _pending(state: State, site: int) -> bool:
    return any(p.site == site and p.pending for p in state)


def test_a_moved_call_is_pending_at_the_statements_it_moved_above() -> None:
    stmts, during, rope = _forward_points(MOVED)
    assert _pending(during[stmts["z = torch.sin(x)"]], rope)
    assert _pending(during[stmts["w = self.q_norm_rope(z)"]], rope)
    assert not _pending(during[stmts["h = torch.relu(x)"]], rope)


def test_a_call_left_in_place_is_pending_from_its_own_statement() -> None:
    stmts, during, rope = _forward_points(KEPT)
    assert not _pending(during[stmts["w = self.q_norm_rope(z)"]], rope)
    assert _pending(during[stmts["y = w * 3"]], rope)


@pytest.mark.parametrize("case", [MOVED, KEPT])
def test_npd302_pairs_the_limits_of_the_schedule(case: Path) -> None:
    assert [e for e in actual(case) if e.code == "NPD302"] == expected(case)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", [MOVED, KEPT])
def test_the_pairs_are_the_limits_that_run_unordered(case: Path) -> None:
    """Captured for ``portable`` (counts made small and distinct), the race checker's timeline agrees."""
    counts = itertools.count(4)
    source = re.sub(
        r"@core_limit\(\d+, \d+\)", lambda _: f"@core_limit({(n := next(counts))}, {2 * n})", case.read_text()
    )
    meeting = _meeting(source, "Attention", (torch.ones(2),))
    assert meeting == _checked(source)
    assert meeting == ({frozenset({"q_norm_rope", "kv_rope"})} if case is MOVED else set())
