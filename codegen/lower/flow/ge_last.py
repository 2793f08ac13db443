"""GE: the tensor the caller made last before a call, which the call's fork edge waits for.

``npu_wait_tensor(<the call's input>, <the caller's last tensor>)`` orders the side stream after that tensor's
producer, and so after the caller's work before it. The search walks back over the caller's statements: a stream
call is no work of the caller's stream; an assignment that makes a certain tensor (``tensors.py``) is the answer;
one that binds a call's results the graph orders its readers by data (what the call reads of them), so the search
goes on past it; so does one that only takes a view of a name (``c = h.view(-1)``: GE runs no work for it and
would move the edge onto what made ``h``, ``ge_view_tokens.py``). A gather out of a buffer (``cos, sin =
self.cos[positions], self.sin[positions]``), or any other op whose value is not a call's, ends it with no answer:
its value is not a certain tensor here (a buffer's type is not read), and no earlier tensor's edge would order the
call after it (where the call reads the gather's result, that read orders it: ``ge_gather.py``).
"""

from __future__ import annotations

import ast

from codegen.lower.flow.exprs import bound_names, runs_op
from codegen.lower.flow.ge_view_tokens import viewed

__all__ = ["binds_a_call", "last_tensor", "tensor_above", "views_a_name"]

_STOP = ""  # the search ended at work that no earlier tensor covers


def binds_a_call(stmt: ast.stmt) -> bool:
    """``a, b = f(x)`` or ``a = f(x)[0]``: the names hold what the call's op made, or a constant index of it (an
    index of a buffer may be a view, which no op makes; a gather by a tensor of indices is ``ge_gather.py``'s)."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return False
    value = stmt.value
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
        value = value.value
    return isinstance(value, ast.Call)


def tensor_above(
    stmt: ast.stmt,
    blocks: dict[ast.stmt, list[ast.stmt]],
    parents: dict,
    site_stmts: set[ast.stmt],
    made: dict[ast.stmt, str],
) -> str | None:
    """The tensor made last before the ``if``/``with`` blocks around ``stmt`` (its own block makes none): a loop
    around it ends the search (an earlier iteration ran its body)."""
    parent = parents.get(stmt)
    while isinstance(parent, (ast.If, ast.With, ast.AsyncWith)) and parent in blocks:
        found = _search(blocks[parent], parent, site_stmts, made)
        if found is not None:
            return found or None
        parent = parents.get(parent)
    return None


def last_tensor(
    block: list[ast.stmt], stmt: ast.stmt, site_stmts: set[ast.stmt], made: dict[ast.stmt, str]
) -> str | None:
    """The tensor the last assignment before ``stmt`` in its block that makes one binds (not a stream call's)."""
    return _search(block, stmt, site_stmts, made) or None


def _search(block: list[ast.stmt], stmt: ast.stmt, site_stmts: set[ast.stmt], made: dict[ast.stmt, str]) -> str | None:
    """``last_tensor``, or ``_STOP`` where the walk back meets work no earlier tensor covers (None: none found). A
    view of the tensor found stands for it (an edge on either lands on its producer), so a call reading the view
    still reads the caller's last tensor."""
    views: dict[str, str] = {}  # a viewed name -> the view made of it later, which stands for it
    for earlier in reversed(block[: block.index(stmt)]):
        if earlier in site_stmts:
            continue
        if earlier in made and (base := _viewed_name(earlier)) is not None:
            views.setdefault(base, views.get(made[earlier], made[earlier]))
            continue
        if earlier in made:  # a view of any tensor it binds stands for it: one op made them all
            viewing = [views[n] for n in sorted(bound_names(earlier)) if n in views]
            return viewing[0] if viewing else made[earlier]
        if isinstance(earlier, (ast.Assign, ast.AnnAssign)) and runs_op(earlier) and not binds_a_call(earlier):
            return _STOP
    return None


def views_a_name(stmt: ast.stmt) -> bool:
    """The statement only takes a view of a name (see :func:`_viewed_name`)."""
    return _viewed_name(stmt) is not None


def _viewed_name(stmt: ast.stmt) -> str | None:
    """``c = h.view(-1)``: ``h``. No work on GE: an edge on ``c`` lands on what made ``h`` (``ge_view_tokens.py``)."""
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
    base = viewed(value) if value is not None else None
    return base.id if isinstance(base, ast.Name) else None
