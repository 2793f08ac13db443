"""Writes ``aten_table.py``: what each ATen op does with ``self``, read from its schema in the installed torch.

    python -m codegen.lower.flow.schema_build        # rewrite the table from this torch
    python -m codegen.lower.flow.schema_build --check  # exit 1 if the table differs

The transformer never imports torch (it runs where torch is not installed), so it reads the facts of the
schemas from the generated table; ``tests/flow/test_schema_table.py`` rebuilds it from the pinned torch
and compares. Per op name (its overloads whose first argument is a tensor or tensors count, not the ``out=``
ones, and a fact must hold for all):

- ``w``: some overload writes ``self`` in place (``Tensor(a!) self``);
- ``v``: every overload returns views of ``self`` only (``Tensor(a) self -> Tensor(a)``, also a list of
  them), writes nothing, and has a kernel of its own: an op composed of others (``reshape``, ``flatten``)
  may copy, which reads the data;
- ``a``: every overload returns views of ``self`` only, whether or not it has a kernel of its own
  (``split``, ``chunk``: the results share ``self``'s storage);
- ``m``: every overload that writes ``self`` changes only its metadata (ATen's ``inplace_view`` tag: ``unsqueeze_``,
  ``t_``, ``resize_``, ``set_``), no data;
- ``1``: every overload returns one tensor; ``t``: every overload returns tensors only, more than one
  or a list (``topk``, ``split``).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from codegen.lower.flow.table_files import kept_table

__all__ = ["build", "main"]

TABLE = Path(__file__).with_name("aten_table.py")
_HEADER = '''"""What each ATen op does with ``self``, from its schema (written by ``schema_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["FACTS"]

# op name -> facts: "w" writes self, "v" returns views of self (no kernel), "a" returns views of self, "m" writes
# only self's metadata, "1" one tensor, "t" tensors only ("": none)
FACTS: dict[str, str] = {
'''


def _overloads() -> dict[str, list[Any]]:
    import torch

    found: dict[str, list[Any]] = defaultdict(list)
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("aten::") and _tensor_op(schema):
            found[schema.name[len("aten::") :]].append(schema)
    return {name: _of_tensors(schemas) for name, schemas in found.items()}


def _of_tensors(schemas: list[Any]) -> list[Any]:
    """A method's overloads on one tensor, where it has any (``sort`` also sorts a list of tensors in place)."""
    one = [s for s in schemas if str(s.arguments[0].type) in ("Tensor", "Optional[Tensor]")]
    return one or schemas


def _tensor_op(schema: Any) -> bool:
    """An overload of tensors (not TorchScript's list, string and number ops of the same name), not ``out=``."""
    if schema.overload_name.endswith("out") or any(a.kwarg_only and a.name == "out" for a in schema.arguments):
        return False
    first = str(schema.arguments[0].type) if schema.arguments else ""
    return first in ("Tensor", "Optional[Tensor]", "List[Tensor]", "List[Optional[Tensor]]")


def _facts(name: str, schemas: list[Any]) -> str:
    firsts = [s.arguments[0] if s.arguments and s.arguments[0].name == "self" else None for s in schemas]
    written = [s for s, a in zip(schemas, firsts) if _writes(a)]
    writes = bool(written)
    views = all(_views_self(s, a) for s, a in zip(schemas, firsts)) and not any(_composite(s) for s in schemas)
    aliases = all(_views_self(s, a) or _list_of_views(s, a) for s, a in zip(schemas, firsts))
    metadata = writes and all(_inplace_view(s) for s in written)
    kinds = {_returns(s) for s in schemas}
    flags = (("w", writes), ("v", views), ("a", aliases), ("m", metadata), ("1", kinds == {"1"}), ("t", kinds == {"t"}))
    return "".join(flag for flag, holds in flags if holds)


def _composite(schema: Any) -> bool:
    """The overload is made of other ops (or the dispatcher does not know it: counted as made of others)."""
    import torch

    qualified = f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name
    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CompositeImplicitAutograd"))
    except RuntimeError:
        return True


def _writes(first: Any) -> bool:
    """The argument is ``self``, written in place (``Tensor(a!) self``)."""
    return first is not None and first.alias_info is not None and first.alias_info.is_write


def _inplace_view(schema: Any) -> bool:
    """The overload is tagged ``inplace_view``: it writes a view's metadata (sizes, strides), not its data."""
    import torch

    packet = getattr(torch.ops.aten, schema.name[len("aten::") :], None)
    overload = getattr(packet, schema.overload_name or "default", None) if packet is not None else None
    return overload is not None and torch.Tag.inplace_view in overload.tags


def _views_self(schema: Any, first: Any) -> bool:
    if first is None or first.alias_info is None or first.alias_info.is_write or not schema.returns:
        return False
    sets = first.alias_info.after_set | first.alias_info.before_set
    return all(r.alias_info is not None and r.alias_info.before_set & sets for r in schema.returns)


def _list_of_views(schema: Any, first: Any) -> bool:
    """One list of views of ``self`` (``Tensor(a)[]``: the bindings hold the elements' alias sets only in the
    schema's text)."""
    if first is None or first.alias_info is None or first.alias_info.is_write or len(schema.returns) != 1:
        return False
    found = re.fullmatch(r"Tensor\((\w+)\)\[\]", str(schema).rsplit(" -> ", 1)[1].strip())
    return found is not None and found.group(1) in first.alias_info.before_set


def _returns(schema: Any) -> str:
    kinds = [str(r.type) for r in schema.returns]
    if kinds == ["Tensor"]:
        return "1"
    if kinds and all(k in ("Tensor", "List[Tensor]", "Tensor[]") for k in kinds):
        return "t"
    return ""


def build() -> str:
    """The table's text for the installed torch."""
    facts = {name: _facts(name, schemas) for name, schemas in sorted(_overloads().items())}
    rows = "".join(f'    "{name}": "{flags}",\n' for name, flags in facts.items())
    return _HEADER + rows + "}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen.lower.flow.schema_build", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is not what torch says")
    args = parser.parse_args(argv)
    text = build()
    return kept_table(TABLE, text, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
