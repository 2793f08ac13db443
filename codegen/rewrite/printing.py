"""Print libcst nodes as ``Module.code`` does, without its per-node position bookkeeping.

``Module.code`` runs every node's printer inside ``record_syntactic_position``, a context
manager that does nothing unless positions are being computed (libcst's metadata). Made
with ``contextlib`` it still costs a generator per node: about a third of printing a
rewritten function. :func:`module_code` prints with a state whose context manager is one
shared object that does nothing, so the text is the same (a test compares them) for less.
Should libcst stop exposing its codegen state, ``Module.code`` is used as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import libcst as cst

__all__ = ["module_code"]


class _Nothing:
    """A context manager that records nothing (exceptions pass through, as from the generator it replaces)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_exc: object) -> None:
        return None


_NOTHING = _Nothing()


def _state_class() -> Any:
    """libcst's codegen state with a context manager that costs nothing; None if libcst has no such state."""
    try:
        from libcst._nodes.internal import CodegenState
    except ImportError:  # pragma: no cover - another libcst layout: print as libcst does
        return None

    class _State(CodegenState):
        def record_syntactic_position(self, node: Any, *, start_node: Any = None, end_node: Any = None) -> Any:
            return _NOTHING

    return _State


_STATE = _state_class()


def module_code(body: Sequence[cst.BaseStatement], *, indent: str, newline: str) -> str:
    """``cst.Module(body=body, default_indent=indent, default_newline=newline).code``."""
    module = cst.Module(body=body, default_indent=indent, default_newline=newline)  # type: ignore[arg-type]
    if _STATE is None:
        return module.code
    state = _STATE(default_indent=indent, default_newline=newline)
    module._codegen(state)
    return "".join(state.tokens)
