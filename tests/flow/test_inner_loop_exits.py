"""An inner loop that leaves itself does not end a micro-batch's iteration: its calls still run apart.

``slot_loops.py`` gives a micro-batch loop's call a join event per parity only where every iteration reaches the
call; it took any ``break`` or ``continue`` under the loop for an early exit, so a ``while`` (or ``for``) inside the
micro-batch loop that leaves itself (``while out[i] is None: ... break``) made micro-batch ``i`` wait for micro-batch
``i - 1``'s dispatch before its own work, and the join at each iteration's end. A ``break`` or ``continue`` belongs to
the innermost loop around it (``loop_exits.py``): the outer iteration still reaches the call, which records its
parity's event and waits for nothing. A ``continue`` of the micro-batch loop itself, a ``return`` inside the inner
loop, or a ``break`` in the inner loop's ``else`` (which breaks the outer loop) still ends the iteration: the wait
stays. Race-free and exact on portable, aclgraph and cuda.
"""

from __future__ import annotations

import pytest

from test_distinct_items import DISTINCT, PAIR, WAIT, _code, _first_loop, _run

_IN = "\n            "  # a line of the micro-batch loop's body
APART = {
    "while_break": f"while out[i] is None:{_IN}    h = h + 0{_IN}    break",
    "while_continue": f"k = 0{_IN}while k < 2 and out[i] is None:{_IN}    k += 1{_IN}    if k == 1:"
    f"{_IN}        continue{_IN}    h = h + 0",
    "for_break": f"for _ in range(2):{_IN}    h = h + 0{_IN}    break",
    "nested_def_return": f"def pick(t):{_IN}    return t{_IN}h = pick(h)",
}
WAITING = {
    "own_continue": f"if i < 0:{_IN}    continue",
    "return_in_inner_loop": f"while out[i] is not None:{_IN}    return out[i]",
    "break_in_inner_else": f"for _ in range(1):{_IN}    h = h + 0{_IN}else:{_IN}    if i < 0:{_IN}        break",
}


def _loop(before: str) -> list[str]:
    return _first_loop(_code(before=before))


@pytest.mark.parametrize("case", sorted(APART))
def test_an_inner_loop_leaving_itself_keeps_the_calls_apart(case: str) -> None:
    loop = _loop(APART[case])
    assert not [line for line in loop if line.startswith("runtime.wait(") and "join" in line]
    assert f"runtime.record({PAIR}[i % 2])" in loop


@pytest.mark.parametrize("case", sorted(WAITING))
def test_an_exit_of_the_micro_batch_loop_keeps_the_wait(case: str) -> None:
    loop = _loop(WAITING[case])
    assert WAIT in loop
    assert 'runtime.record("m.Model.dispatch.join")' in loop


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("case", sorted(APART))
def test_race_free_and_exact(case: str, target: str) -> None:
    _run(_code(before=APART[case], target=target), DISTINCT, 2, target)
