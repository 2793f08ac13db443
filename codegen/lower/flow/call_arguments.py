"""What a call hands one parameter of the function it runs, read from the call's spelling.

The table readers ask it of a call of a function whose parameters they know by name and position: a function of
``torch.nn.functional`` (``torch_functional.py``: ``F.relu(x, inplace=self.inplace)`` hands ``inplace`` its
keyword), a torch layer's ``forward`` (``torch_layer_writes.py``: ``self.act(h)`` hands ``input`` its first
argument) and a torch layer's constructor (``constructor_args.py``). A ``*`` spread at or before the parameter's
position, or a ``**`` where nothing names it, may hand it any of what they spread: the answer is then all of them,
as one tuple, so that whatever asks what the argument may be, or whether it may be given, takes each into account.
"""

from __future__ import annotations

import ast

__all__ = ["passed_argument"]


def passed_argument(call: ast.Call, name: str, position: int | None) -> ast.expr | None:
    """What ``call`` hands the parameter ``name``, ``position``-th of the positional ones (None: keyword only); None
    where it hands it nothing (its default). A spread that may reach it: every argument spread, as a tuple."""
    if position is not None and any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return _every(call.args)
    given = call.args[position] if position is not None and position < len(call.args) else None
    given = next((k.value for k in call.keywords if k.arg == name), given)
    spread = [k.value for k in call.keywords if k.arg is None]
    return _every(spread) if given is None and spread else given


def _every(spread: list[ast.expr]) -> ast.expr:
    """One tuple of the values given (the list behind a ``*`` for its elements)."""
    return ast.Tuple(elts=[a.value if isinstance(a, ast.Starred) else a for a in spread], ctx=ast.Load())
