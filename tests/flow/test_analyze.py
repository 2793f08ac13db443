"""Unit tests of the sync analysis: each caller with its joins and relays spelled as marker statements.

``join(f)``: the caller's stream waits for the call of ``f`` there; ``join_if_forked(f)``: only if it forked
(a flag set at the call says so); ``relay(f, g)``: the stream of ``g`` waits for ``f``'s, the caller's does not.
Streams: ``side``, ``guarded_side`` (forks under a guard), ``s1`` and ``s2`` on "s"; ``other`` on "o"; ``q`` and
``score`` on "q", ``w`` on "w". Other calls are plain calls.
"""

from __future__ import annotations

import pytest

from flowmarks import marked

STREAMS = {"side": "s", "other": "o", "guarded_side": "s", "q": "q", "w": "w", "score": "q", "s1": "s", "s2": "s"}

CASES = {
    "join_before_first_use_on_each_path": (
        """def f(self, x, flag):
    s = self.side(x)
    a = x * 2
    if flag:
        a = a + s
    return a
""",
        """def f(self, x, flag):
    s = self.side(x)
    a = x * 2
    join(side)
    if flag:
        a = a + s
    return a
""",
    ),
    "call_under_if_joins_only_where_it_forked": (
        """def f(self, x, shared_experts):
    if shared_experts is not None:
        shared = self.side(x)
    routed = self.moe(x)
    if shared_experts is not None:
        routed = routed + shared
    return routed
""",
        """def f(self, x, shared_experts):
    if shared_experts is not None:
        shared = self.side(x)
    routed = self.moe(x)
    join_if_forked(side)
    if shared_experts is not None:
        routed = routed + shared
    return routed
""",
    ),
    "join_in_each_branch_where_one_works_first": (
        """def f(self, x, flag):
    s = self.side(x)
    if flag:
        a = s + 1
    else:
        a = x * 2
        a = a + s
    return a
""",
        """def f(self, x, flag):
    s = self.side(x)
    if flag:
        join(side)
        a = s + 1
    else:
        a = x * 2
        join(side)
        a = a + s
    return a
""",
    ),
    "next_call_of_a_callee_waits_for_the_result_read_right_after_it": (
        """def f(self, x):
    w = self.side(x)
    for layer in self.layers:
        if layer.last:
            x = layer(x, w)
        else:
            nxt = self.side(layer.up)
            x = layer(x, w)
            w = nxt
    return x
""",
        """def f(self, x):
    w = self.side(x)
    for layer in self.layers:
        join(side)
        join_if_forked(side)
        if layer.last:
            x = layer(x, w)
        else:
            nxt = self.side(layer.up)
            x = layer(x, w)
            w = nxt
    join(side)
    join_if_forked(side)
    return x
""",
    ),
    "next_call_whose_result_is_read_with_the_old_one_shares_its_wait": (
        """def f(self, x):
    a = self.side(x)
    b = self.side(x + 1)
    y = torch.cat([a, b])
    return y
""",
        """def f(self, x):
    a = self.side(x)
    b = self.side(x + 1)
    join(side)
    y = torch.cat([a, b])
    return y
""",
    ),
    "loop_carried_result_joined_in_the_next_iteration": (
        """def f(self, x):
    prev = None
    for i in range(3):
        if prev is not None:
            x = x + prev
        prev = self.side(x)
    return x
""",
        """def f(self, x):
    prev = None
    for i in range(3):
        if prev is not None:
            join_if_forked(side)
            x = x + prev
        prev = self.side(x)
    join_if_forked(side)
    return x
""",
    ),
    "relay_between_side_streams": (
        """def f(self, x):
    q = self.q(x)
    w = self.w(x)
    k = self.key(x)
    s = self.score(q, w, k)
    return s
""",
        """def f(self, x):
    q = self.q(x)
    w = self.w(x)
    k = self.key(x)
    relay(w, score)
    s = self.score(q, w, k)
    join(score)
    return s
""",
    ),
    "loop_joins_before_use_not_at_iteration_end": (
        """def f(self, x):
    for layer in self.layers:
        s = self.side(x)
        x = layer(x)
        x = x + s
    return x
""",
        """def f(self, x):
    for layer in self.layers:
        s = self.side(x)
        x = layer(x)
        join(side)
        x = x + s
    return x
""",
    ),
    "return_inside_try_with_finally": (
        """def f(self, x):
    try:
        s = self.side(x)
        return s * 2
    finally:
        t = self.side(x)
""",
        """def f(self, x):
    try:
        s = self.side(x)
        join(side)
        return s * 2
    finally:
        t = self.side(x)
        join(side)
""",
    ),
    "one_line_forms_and_semicolons": (
        """def f(self, x, c):
    if c: y = self.side(x)
    y2 = self.side(x); z = y2 + 1
    if c: return y
    return z
""",
        """def f(self, x, c):
    if c:
        y = self.side(x)
    y2 = self.side(x)
    join(side)
    z = y2 + 1
    if c:
        return y
    return z
""",
    ),
    "same_stream_join_covers_the_earlier_call": (
        """def f(self, x):
    a = self.s1(x)
    b = self.s2(x)
    return a + b
""",
        """def f(self, x):
    a = self.s1(x)
    b = self.s2(x)
    join(s2)
    return a + b
""",
    ),
    "while_test_reads_the_result": (
        """def f(self, x):
    s = self.side(x)
    while s.sum() > 0:
        s = self.side(s)
    return s
""",
        """def f(self, x):
    s = self.side(x)
    join(side)
    while s.sum() > 0:
        s = self.side(s)
        join(side)
    return s
""",
    ),
    "elif_test_joined_before_the_chain": (
        """def f(self, x, a):
    s = self.side(x)
    if a:
        y = x + 1
    elif s.sum() > 0:
        y = x
    else:
        y = s
    return y
""",
        """def f(self, x, a):
    s = self.side(x)
    join(side)
    if a:
        y = x + 1
    elif s.sum() > 0:
        y = x
    else:
        y = s
    return y
""",
    ),
    "break_and_loop_else": (
        """def f(self, x):
    s = None
    while x.sum() > 0:
        s = self.side(x)
        if x.max() > 3:
            break
        x = x - 1
    else:
        x = x + 1
    return x
""",
        """def f(self, x):
    s = None
    while x.sum() > 0:
        s = self.side(x)
        if x.max() > 3:
            break
        x = x - 1
    else:
        x = x + 1
    join_if_forked(side)
    return x
""",
    ),
    "continue_leaves_the_call_pending": (
        """def f(self, xs):
    out = []
    for x in xs:
        s = self.side(x)
        if x is None:
            continue
        out.append(s)
    return out
""",
        """def f(self, xs):
    out = []
    for x in xs:
        s = self.side(x)
        if x is None:
            continue
        join(side)
        out.append(s)
    join_if_forked(side)
    return out
""",
    ),
    "handler_reads_a_result_of_the_try_body": (
        """def f(self, x):
    try:
        s = self.side(x)
        y = x.float()
    except RuntimeError:
        y = s + 1
    return y
""",
        """def f(self, x):
    try:
        s = self.side(x)
        y = x.float()
    except RuntimeError:
        join_if_forked(side)
        y = s + 1
    join_if_forked(side)
    return y
""",
    ),
    "comprehension_and_lambda_read": (
        """def f(self, x):
    s = self.side(x)
    t = self.other(x)
    ys = [s * i for i in range(3)]
    g = lambda: t
    return ys, g
""",
        """def f(self, x):
    s = self.side(x)
    t = self.other(x)
    join(side)
    ys = [s * i for i in range(3)]
    join(other)
    g = lambda: t
    return (ys, g)
""",
    ),
    "match_cases": (
        """def f(self, x, mode):
    s = self.side(x)
    match mode:
        case "a":
            y = s * 2
        case _:
            y = x
    return y
""",
        """def f(self, x, mode):
    s = self.side(x)
    match mode:
        case 'a':
            join(side)
            y = s * 2
        case _:
            y = x
    join(side)
    return y
""",
    ),
    "nested_definition_reads_when_defined": (
        """def f(self, x):
    s = self.side(x)
    with torch.no_grad():
        def g():
            return s + 1
        y = x * 2
    return g, y
""",
        """def f(self, x):
    s = self.side(x)
    with torch.no_grad():
        join(side)

        def g():
            return s + 1
        y = x * 2
    return (g, y)
""",
    ),
    "aliases_hold_the_result_and_del_drops_it": (
        """def f(self, x):
    s = self.side(x)
    t = s
    del s
    pair = (t, x)
    z = x + 1
    return pair[0] + z
""",
        """def f(self, x):
    s = self.side(x)
    t = s
    del s
    pair = (t, x)
    z = x + 1
    join(side)
    return pair[0] + z
""",
    ),
    "metadata_reads_do_not_wait": (
        """def f(self, x):
    s = self.side(x)
    if s is None or s.shape[0] == 0:
        return x
    n = s.size(0)
    return x[:n] + s
""",
        """def f(self, x):
    s = self.side(x)
    if s is None or s.shape[0] == 0:
        join(side)
        return x
    n = s.size(0)
    join(side)
    return x[:n] + s
""",
    ),
    "guarded_call_forked_again_joins_the_earlier_fork": (
        """def f(self, x):
    acc = x
    for i in range(3):
        s = self.guarded_side(x)
        acc = acc * 2
    return acc + s
""",
        """def f(self, x):
    acc = x
    for i in range(3):
        join_if_forked(guarded_side)
        s = self.guarded_side(x)
        acc = acc * 2
    join_if_forked(guarded_side)
    return acc + s
""",
    ),
    "rebound_result_still_joined_before_return": (
        """def f(self, x):
    s = self.side(x)
    s = x * 2
    y = x + 1
    return y + s
""",
        """def f(self, x):
    s = self.side(x)
    s = x * 2
    y = x + 1
    join(side)
    return y + s
""",
    ),
    "augmented_assignment_reads": (
        """def f(self, x):
    s = self.side(x)
    y = x * 2
    s += 1
    return y
""",
        """def f(self, x):
    s = self.side(x)
    y = x * 2
    join(side)
    s += 1
    return y
""",
    ),
    "falls_off_the_end": (
        """def f(self, x, out):
    s = self.side(x)
    out.copy_(x)
""",
        """def f(self, x, out):
    s = self.side(x)
    out.copy_(x)
    join(side)
""",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_analysis(name: str) -> None:
    source, expected = CASES[name]
    assert marked(source, STREAMS) == expected
