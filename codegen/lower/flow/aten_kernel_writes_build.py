"""Writes ``aten_kernel_writes_table.py``: which arguments the public functions of ``torch`` write in place though
their ATen schemas mark none, found by running them on the installed (pinned) torch (``aten_kernel_probe.py``).

    python -m codegen.lower.flow.aten_kernel_writes_build          # rewrite the table from this torch
    python -m codegen.lower.flow.aten_kernel_writes_build --check  # exit 1 if the table differs

The transformer never imports torch: it reads the table (``aten_kernel_writes.py``).
``tests/flow/test_torch_batch_norm_writes.py`` rebuilds it from the pinned torch and compares.
"""

from __future__ import annotations

import sys
from pathlib import Path

from codegen.lower.flow.aten_kernel_probe import kernel_writes_found
from codegen.lower.flow.table_files import table_main

__all__ = ["build", "main"]

TABLE = Path(__file__).with_name("aten_kernel_writes_table.py")
_HEADER = '''"""Which arguments the public functions of ``torch`` write in place through slots their ATen schemas
leave plain (written by ``aten_kernel_writes_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["KERNEL_WRITES"]

# function -> the parameters named here (``@``: the position, none by keyword only; ``=``: the default is None or
# False) | each parameter its kernel writes in place, with ``:`` and the parameters that must be given (not None,
# not False)
KERNEL_WRITES: dict[str, str] = {
'''


def build() -> str:
    """The table's text for the installed torch."""
    rows = "".join(f'    "{name}": "{named} | {_text(w)}",\n' for name, (named, w) in kernel_writes_found().items())
    return _HEADER + rows + "}\n"


def _text(written: dict[str, set[frozenset[str]]]) -> str:
    """``running_mean:training``, ``running_mean`` (no guard); only the smallest sets of guards of each."""
    kept = {p: {g for g in gs if not any(other < g for other in gs)} for p, gs in written.items()}
    items = [":".join([p, *sorted(guards)]) for p, alternatives in kept.items() for guards in alternatives]
    return " ".join(sorted(items))


def main(argv: list[str] | None = None) -> int:
    return table_main("codegen.lower.flow.aten_kernel_writes_build", TABLE, build, argv)


if __name__ == "__main__":
    sys.exit(main())
