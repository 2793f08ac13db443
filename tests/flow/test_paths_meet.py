"""The one matcher of state paths (``paths_meet.py``): a path meets itself, a path under it, and a wildcard over it.

``crossing_calls.py`` orders a side call after a third stream's call whose state paths meet its own,
``crossing_writes.py`` joins a pending call before a statement reading a path that meets its own (but for an
attribute path under a plain name, see ``touches``), and ``rebound_state.py`` keeps the narrower of two stored
chains that meet. These are the answers all three read.
"""

from __future__ import annotations

import pytest

from codegen.lower.flow.crossing_writes import touches
from codegen.lower.flow.paths_meet import meets, under


@pytest.mark.parametrize(
    ("first", "second", "met"),
    [
        ("self.buf", "self.buf", True),
        ("self.buf", "self.buf.x", True),
        ("self.buf", "self.buf[0]", True),
        ("self.*", "self.sub.scale", True),
        ("self.sub.*", "self.sub", True),
        ("self", "self.buf", True),
        ("*", "self.buf", True),
        ("self.buf", "self.bufs", False),
        ("self.buf", "self.other", False),
        ("self.*", "other.buf", False),
    ],
)
def test_paths_meet(first: str, second: str, met: bool) -> None:
    assert meets(first, second) is met and meets(second, first) is met


def test_a_path_is_not_under_itself() -> None:
    assert not under("self.buf", "self.buf") and not under("*", "*") and under("sub.stash", "sub")


@pytest.mark.parametrize(
    ("names", "reads", "met"),
    [
        ({"self.acc"}, {"self", "self.layers"}, False),  # reads self.layers, named
        ({"self.acc"}, {"peek", "self", "self.*"}, True),  # self given whole
        ({"y"}, {"y.shape"}, False),  # metadata: data reads would list y
        ({"y"}, {"y", "y.sum"}, True),
        ({"self"}, {"self.*"}, True),  # an unnamed write of self's state, a method of self called
        ({"self.*"}, {"self.buf"}, True),
    ],
)
def test_touches(names: set[str], reads: set[str], met: bool) -> None:
    assert touches(frozenset(names), reads) is met
