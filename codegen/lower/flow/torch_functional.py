"""What a call of a function of ``torch.nn.functional`` writes of its arguments, as torch's own source says.

``F.embedding(ids, self.weight, max_norm=1.0)`` renorms the rows of ``self.weight`` it looks up in place, though the
ATen op of its name writes nothing: a function of ``torch.nn.functional`` is a Python body whose calls write (its
``torch.embedding_renorm_``), and which parameter it writes, under which ``if``, is read from that body by
``torch_functional_build.py`` (the table ``torch_functional_table.py``). A pending call reading ``self.weight`` is
then joined before the lookup, on the caller's stream or another's; ``F.embedding(ids, self.weight)`` without
``max_norm`` (or ``max_norm=None``) writes nothing and keeps its overlap. A write guarded by a parameter holds where
the call gives it anything but a literal None or False (``F.relu(x, inplace=self.inplace)`` may write ``x``); a
call spreading ``*args`` or ``**kwargs`` into a function that writes may write every argument. What the ATen op of
the function's name writes (``foreign_writes.py``) and what the call's spelling writes (``inplace=True``, ``out=``:
``written_exprs.py``) still count. The build also runs the functions it can make arguments for (``F.batch_norm``
writes its running stats where ``training`` is given, which no schema says); one it ran (``ran_functional``) writes
nothing beyond its row, even where no ATen op has its name (``F.gaussian_nll_loss`` reads its ``var``); one that
may return an argument as it came, unread (``F.dropout`` in eval or with ``p=0``), reads it only where the call
surely gives what makes it read (``handed_back``: ``used_calls.py`` asks whether a later call reads a tensor), and
its result may be that argument (``handed_back_args``: ``foreign_writes.foreign_results``), as for ``torch.dropout``,
``torch.feature_dropout`` and ``torch.conj_physical`` (of a real tensor), whose ATen ops are composites that run no op
there (``aten_probe.py``).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence

from codegen.lower.flow.call_arguments import passed_argument
from codegen.lower.flow.guarded_rows import Entry, Param, given, row_entry
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["functional_writes", "guarded_writes", "handed_back", "handed_back_args", "ran_functional"]

_MODULE = ("torch", "nn", "functional")


def functional_writes(call: ast.Call, dotted: Sequence[str]) -> frozenset[str]:
    """The caller's names whose memory ``call`` of ``dotted`` (``torch.nn.functional.embedding``) writes in place
    by the function's body (see above); none for any other function."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        spread = _table().get(dotted[-1]) is not None and tuple(dotted[:-1]) == _MODULE
        values = [*call.args, *(k.value for k in call.keywords)] if spread else []
        return frozenset().union(*(alias_sources(a) for a in values))
    return frozenset().union(*(alias_sources(arg) for arg, _ in guarded_writes(call, dotted)))


def ran_functional(dotted: Sequence[str]) -> bool:
    """``dotted`` is a function of ``torch.nn.functional`` the table's build ran: it writes only what its row says."""
    from codegen.lower.flow.torch_functional_table import RAN

    return tuple(dotted[:-1]) == _MODULE and dotted[-1] in RAN


def guarded_writes(call: ast.Call, dotted: Sequence[str]) -> list[tuple[ast.expr, list[ast.expr]]]:
    """Each argument ``call`` of ``dotted`` may write in place, with the arguments it gives the parameters that must
    be given for that write (``self.weight``, ``[self.max_norm]``); none for a call spreading its arguments."""
    entry = _table().get(dotted[-1]) if tuple(dotted[:-1]) == _MODULE else None
    if entry is None:
        return []
    params, writes = entry
    found: list[tuple[ast.expr, list[ast.expr]]] = []
    for written, guards in writes:
        arg = passed_argument(call, written, params[written][0])
        if arg is not None and all(given(call, g, params[g]) for g in guards):
            found.append((arg, [a for g in guards if (a := passed_argument(call, g, params[g][0])) is not None]))
    return found


def handed_back(call: ast.Call, dotted: Sequence[str], slot: int | str | None) -> bool:
    """``call`` of ``dotted`` may return its argument at ``slot`` as it came, unread (``F.dropout(x, p,
    training=self.training)``: in eval ATen's ``dropout`` hands ``x`` back): the table's ``PASSED`` row (for
    ``torch.dropout``, ``TORCH_PASSED``) names that parameter with no guard, or with one the call may not give
    (anything but a literal other than None, False, 0, or left out where its default is none of these)."""
    entry = _passed_entry(dotted)
    if entry is None or slot is None:
        return entry is not None
    params, passes = entry
    at_slot = [guards for name, guards in passes if slot in (name, params[name][0])]
    return any(not guards or not all(_surely_given(call, g, params[g]) for g in guards) for guards in at_slot)


def handed_back_args(call: ast.Call, dotted: Sequence[str]) -> list[ast.expr]:
    """The arguments ``call`` of ``dotted`` may return as they came (see :func:`handed_back`): what its result may
    be (``d = F.dropout(t, 0.1, training=self.training)``; ``d.add_(1)`` writes ``t`` in eval). A call spreading its
    arguments may return any of them."""
    entry = _passed_entry(dotted)
    if entry is None:
        return []
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return [*call.args, *(k.value for k in call.keywords)]
    params, passes = entry
    found = [passed_argument(call, name, params[name][0]) for name, _ in passes if handed_back(call, dotted, name)]
    return [arg for arg in found if arg is not None]


def _passed_entry(dotted: Sequence[str]) -> Entry | None:
    """The ``PASSED`` row of a function of ``torch.nn.functional``, the ``TORCH_PASSED`` one of ``torch``'s."""
    if tuple(dotted[:-1]) == _MODULE:
        return _passed_table()[0].get(dotted[-1])
    return _passed_table()[1].get(dotted[-1]) if tuple(dotted[:-1]) == _MODULE[:1] else None


def _surely_given(call: ast.Call, name: str, param: Param) -> bool:
    arg = passed_argument(call, name, param[0])
    if arg is None:
        return not param[1]
    return isinstance(arg, ast.Constant) and bool(arg.value)


@functools.cache
def _table() -> dict[str, Entry]:
    """The table read into entries (on the first question)."""
    from codegen.lower.flow.torch_functional_table import FUNCTIONS

    return {name: row_entry(text) for name, text in FUNCTIONS.items()}


@functools.cache
def _passed_table() -> tuple[dict[str, Entry], dict[str, Entry]]:
    from codegen.lower.flow.torch_functional_table import PASSED, TORCH_PASSED

    return {n: row_entry(text) for n, text in PASSED.items()}, {n: row_entry(text) for n, text in TORCH_PASSED.items()}
