"""Writes ``torch_layer_writes_table.py``: which inputs the ``forward`` of each of torch's module classes writes in
place, and under which constructor argument, read from the sources of ``torch.nn.modules`` in the installed torch.

    python -m codegen.lower.flow.torch_layer_writes_build          # rewrite the table from this torch
    python -m codegen.lower.flow.torch_layer_writes_build --check  # exit 1 if the table differs

``self.act = nn.ReLU(inplace=True)`` then ``self.act(h)`` writes ``h``: a caller's stream running it while a side
stream still reads ``h`` races. Two readings make a row: ``functional_input_writes.py`` (a parameter of ``forward``
handed to an argument ``torch.nn.functional`` writes, under the constructor argument that turns it on, stored by the
class's ``__init__`` or a base's), and ``forward_op_writes.py`` (a parameter ``forward`` writes by an in-place op of
its own, ``input.add_(1)``, ``torch.relu_(input)``, as the op's ATen schema says). In the pinned torch the second
finds nothing: no layer of ``torch.nn.modules`` writes its input but through ``torch.nn.functional`` (its forwards'
own in-place ops write tensors they made, or the module's state), which ``tests/flow/test_torch_layer_op_writes.py``
checks against the installed torch; a torch that adds one gets its row. Each class is the one ``torch.nn`` exports
by its name (``torch_module_sources.py``). ``torch_layer_writes.py`` reads the table with the call that built the
layer. It stands apart from ``torch_module_methods_table.py`` (what a module writes of its own state) and
``torch_layer_reads_table.py`` (what it surely reads): one question per table.
"""

from __future__ import annotations

import sys
from pathlib import Path

from codegen.lower.flow.forward_op_writes import forward_op_writes
from codegen.lower.flow.functional_input_writes import functional_input_writes
from codegen.lower.flow.state_made_none import init_chain
from codegen.lower.flow.table_files import table_main
from codegen.lower.flow.torch_module_sources import inherited_method, torch_classes

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
        forward = inherited_method(classes, name, "forward")
        written = functional_input_writes(forward[1], init_chain(classes, name)) if forward is not None else []
        written = sorted({*written, *forward_op_writes(classes, name)})
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


def main(argv: list[str] | None = None) -> int:
    return table_main("codegen.lower.flow.torch_layer_writes_build", TABLE, build, argv)


if __name__ == "__main__":
    sys.exit(main())
