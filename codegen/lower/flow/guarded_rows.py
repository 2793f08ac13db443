"""The row format the probed torch tables share, and when a call gives a row's guard.

``torch_functional_table.py`` (``F``'s writes and hand-backs) and ``aten_kernel_writes_table.py`` (kernels writing
slots their schema leaves plain) both write a function as ``"param@position param= ... | written:guard ..."``: each
parameter with its position among the positional ones (none: keyword only) and ``=`` where its default is None or
False, then each parameter written with the parameters that must be given for the write. A guard holds where the
call gives it anything but a literal None or False, or leaves it out while its default is neither: nothing here
assumes eval (``training=self.training`` may be True).
"""

from __future__ import annotations

import ast

from codegen.lower.flow.call_arguments import passed_argument

__all__ = ["Entry", "Param", "given", "row_entry"]

Param = tuple[int | None, bool]  # its position (None: by keyword only), whether its default is None or False
Entry = tuple[dict[str, Param], list[tuple[str, tuple[str, ...]]]]  # params named; (written, guards) each


def row_entry(text: str) -> Entry:
    """A table row read: the parameters named, and each written parameter with its guards."""
    named, _, written = text.partition(" | ")
    params: dict[str, Param] = {}
    for word in named.split():
        name, _, position = word.rstrip("=").partition("@")
        params[name] = (int(position) if position else None, word.endswith("="))
    return params, [(item.split(":")[0], tuple(item.split(":")[1:])) for item in written.split()]


def given(call: ast.Call, name: str, param: Param) -> bool:
    """The call gives ``name`` a value that may be neither None nor False (left out: its default)."""
    arg = passed_argument(call, name, param[0])
    if arg is None:
        return not param[1]
    return not (isinstance(arg, ast.Constant) and arg.value in (None, False))
