"""Writes ``aten_overload_table.py``: the arguments each overload of each ATen op writes, read from its schema in
the installed torch.

    python -m codegen.lower.flow.aten_overload_build          # rewrite the table from this torch
    python -m codegen.lower.flow.aten_overload_build --check  # exit 1 if the table differs

``aten_table.py`` holds per op name what its overloads do with ``self``; a call that names its overload
(``torch.ops.aten.mul_.Scalar(x, 2)``, ``torch.ops.aten.add.out(a, b, out=c)``, ``torch.ops.aten.sort.values(x,
values=v, indices=i)``) writes exactly what that overload's schema types ``Tensor(a!)``, whatever the argument's
name or place. The table lists every overload that writes any argument (``op.overload``; ``default`` for the
unnamed one) with the arguments it writes (``name@position``, or ``name`` where passed by keyword only), and every
op name with an overload at all, so that an overload it does not list is known to write nothing.
``tests/flow/test_aten_overloads.py`` rebuilds it from the pinned torch and compares.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from codegen.lower.flow.table_files import table_main

__all__ = ["build", "main"]

TABLE = Path(__file__).with_name("aten_overload_table.py")
_HEADER = '''"""What each ATen overload writes, from its schema (written by ``aten_overload_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["OPS", "WRITES"]

'''


def _schemas() -> list[Any]:
    import torch

    return [s for s in torch._C._jit_get_all_schemas() if s.name.startswith("aten::")]


def _written(schema: Any) -> str:
    """The arguments the overload writes: ``name@position`` (``name`` for a keyword-only one), by position."""
    found = []
    for at, argument in enumerate(schema.arguments):
        if argument.alias_info is not None and argument.alias_info.is_write:
            found.append(argument.name if argument.kwarg_only else f"{argument.name}@{at}")
    return " ".join(found)


def build() -> str:
    """The table's text for the installed torch."""
    schemas = _schemas()
    ops = sorted({s.name[len("aten::") :] for s in schemas})
    writes = sorted(
        (f"{s.name[len('aten::') :]}.{s.overload_name or 'default'}", _written(s)) for s in schemas if _written(s)
    )
    names = "".join(f'        "{name}",\n' for name in ops)
    rows = "".join(f'    "{key}": "{written}",\n' for key, written in writes)
    return (
        _HEADER
        + "# every op name with an overload\nOPS: frozenset[str] = frozenset(\n    {\n"
        + names
        + "    }\n)\n\n# op.overload -> the arguments it writes (name@position, or name: by keyword only)\n"
        + "WRITES: dict[str, str] = {\n"
        + rows
        + "}\n"
    )


def main(argv: list[str] | None = None) -> int:
    return table_main("codegen.lower.flow.aten_overload_build", TABLE, build, argv)


if __name__ == "__main__":
    sys.exit(main())
