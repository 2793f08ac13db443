"""An ``if`` or ``for`` test reading this micro-batch's item waits for no earlier micro-batch's call.

``item_apart.py`` keeps a statement of a slotted call's loop, up to the call, that names a container only as ``c[i]``
apart from the calls of earlier iterations; the tests of compound statements were joined by ``analyze.join_reads``,
which did not ask. ``if out[i] is None:`` before ``ds[i].prepare(h)`` read ``out``, which held the earlier
iterations' results, so micro-batch ``i`` waited for micro-batch ``i - 1``'s dispatch before its own work. Item ``i``
holds what this iteration or the code before the loop stored, so the test now waits for nothing, race-free on every
target; a test reading another item (``out[i - 1]``) still waits.
"""

from __future__ import annotations

import pytest

from test_distinct_items import DISTINCT, PAIR, WAIT, _code, _first_loop, _run

TESTS = [
    "if out[i] is None:\n                h = h + 0",
    "for _ in range(int(out[i] is None)):\n                h = h + 0",
]


@pytest.mark.parametrize("before", TESTS)
def test_a_test_of_this_item_waits_for_no_earlier_call(before: str) -> None:
    loop = _first_loop(_code(before=before))
    assert not [line for line in loop if line.startswith("runtime.wait(") and "join" in line]
    assert f"runtime.record({PAIR}[i % 2])" in loop


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("before", TESTS)
def test_race_free_and_exact(before: str, target: str) -> None:
    _run(_code(before=before, target=target), DISTINCT, 2, target)


def test_a_test_of_another_item_waits() -> None:
    before = "if i > 0 and out[i - 1] is None:\n                h = h + 0"
    loop = _first_loop(_code(before=before))
    assert loop.index(WAIT) < loop.index(before.splitlines()[0])
