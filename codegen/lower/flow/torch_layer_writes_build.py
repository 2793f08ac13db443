"""Writes ``torch_layer_writes_table.py``: which inputs the ``forward`` of each of torch's module classes writes in
place, and under which constructor argument, read from the sources of ``torch.nn.modules`` in the installed torch.

    python -m codegen.lower.flow.torch_layer_writes_build          # rewrite the table from this torch
    python -m codegen.lower.flow.torch_layer_writes_build --check  # exit 1 if the table differs

``self.act = nn.ReLU(inplace=True)`` then ``self.act(h)`` writes ``h``: a caller's stream running it while a side
stream still reads ``h`` races. The reading is ``functional_input_writes.py`` (a parameter of ``forward`` handed to
an argument ``torch.nn.functional`` writes); ``torch_layer_writes.py`` reads the table with the call that built the
layer. It stands apart from ``torch_module_methods_table.py`` (what a module writes of its own state) and
``torch_layer_reads_table.py`` (what it surely reads): one question per table.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from codegen.lower.flow.functional_input_writes import functional_input_writes
from codegen.lower.flow.state_made_none import init_chain
from codegen.lower.flow.table_files import table_main
from codegen.lower.flow.torch_module_sources import TorchClass, torch_classes

__all__ = ["build", "main"]

TABLE = Path(__file__).with_name("torch_layer_writes_table.py")
_HEADER = '''"""Which inputs the ``forward`` of each of torch's module classes writes in place (written by
``torch_layer_writes_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["WRITES"]

'''


def build() -> str:
    """The table's text for the installed torch."""
    classes = torch_classes()
    rows = []
    for name in sorted(classes):
        forward = _method(classes, name, "forward")
        written = functional_input_writes(forward, init_chain(classes, name)) if forward is not None else []
        if written:
            rows.append(f'    "{name}": "{" ".join(written)}",\n')
    return (
        _HEADER
        + "# class -> each forward parameter it may write, as p@i (i-th after the object), with :q@j where the\n"
        + "# constructor must be given its parameter q (j-th after the object; =: its default is None or False)\n"
        + "WRITES: dict[str, str] = {\n"
        + "".join(rows)
        + "}\n"
    )


def _method(classes: dict[str, TorchClass], cls: str, name: str, depth: int = 0) -> ast.FunctionDef | None:
    """``name`` as ``cls`` or the first of its bases defining it has it."""
    if cls not in classes or depth > 16:
        return None
    found = classes[cls]
    if name in found.methods:
        return found.methods[name]
    return next((m for b in found.bases if (m := _method(classes, b, name, depth + 1)) is not None), None)


def main(argv: list[str] | None = None) -> int:
    return table_main("codegen.lower.flow.torch_layer_writes_build", TABLE, build, argv)


if __name__ == "__main__":
    sys.exit(main())
