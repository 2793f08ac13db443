"""Writes ``codegen/lower/flow/npu_table.py``: the schemas of torch_npu's own ops, and the ops whose sources say
they write an argument their schema does not mark.

    python tools/npu_table_build.py op_plugin_functions.yaml --sources OP_PLUGIN_ROOT --commit SHA
    python tools/npu_table_build.py ... --check   # exit 1 if the table differs

The transformer never imports torch_npu (it is never installed here), so what ``torch_npu.<op>`` and
``torch.ops.npu.<op>`` write comes from the op declarations torch_npu is built from: the ``custom`` section of
Ascend op-plugin's ``op_plugin/config/op_plugin_functions.yaml`` (torch_npu registers each under
``TORCH_LIBRARY(npu, m)`` and binds every ``torch.ops.npu`` name on the ``torch_npu`` module). Every overload of
every version the file lists is kept: a call may reach any of them.

A schema marks what an op writes with ``Tensor(a!)``, but torch_npu does not check it, and some kernels write an
input declared plain ``Tensor``: ``npu_kv_rmsnorm_rope_cache`` fills ``k_cache`` and returns it,
``npu_apply_rotary_pos_emb`` rotates ``query`` and ``key`` in place. With ``--sources`` (the op-plugin checkout
the yaml came from), an op that declares no write is listed as undeclared where its kernel returns one of its
tensor parameters (``return std::tie(k_cache, ...)``) or its page under ``docs/`` says it updates in place; the
transformer then treats it as unknown (it may write every argument). Standard library only (the yaml's
``- func:`` lines are read as text).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "codegen" / "lower" / "flow" / "npu_table.py"
_FUNC = re.compile(r"^  - func: (.+?)\s*$")
_TENSOR_PARAM = re.compile(r"at::Tensor\s*&\s*(\w+)")
_INPLACE_DOC = re.compile(r"in-place|inplace|原地", re.IGNORECASE)


def custom_schemas(yaml_text: str) -> list[str]:
    """The ``func:`` schema strings of the yaml's ``custom`` section, in file order, each once."""
    found: list[str] = []
    section = ""
    for line in yaml_text.splitlines():
        if line and not line.startswith((" ", "#")):
            section = line.split(":", 1)[0]
        elif section == "custom" and (match := _FUNC.match(line)) and match.group(1) not in found:
            found.append(match.group(1).strip("'\""))
    return found


def op_name(schema: str) -> str:
    """``npu_scatter_pa_cache.value(...) -> ...`` -> ``npu_scatter_pa_cache``."""
    return schema.split("(", 1)[0].split(".", 1)[0]


def undeclared(schemas: list[str], root: Path) -> list[str]:
    """The ops none of whose schemas marks a write, whose kernel returns a tensor parameter or whose page says
    it updates in place."""
    declared = {op_name(s) for s in schemas if "!" in s.split("->", 1)[0]}
    quiet = sorted({op_name(s) for s in schemas} - declared)
    sources = "\n".join(p.read_text(errors="ignore") for p in sorted((root / "op_plugin" / "ops").rglob("*.cpp")))
    returned = _returning_a_parameter(sources, set(quiet))
    docs = root / "docs"
    paged = {op for op in quiet for page in docs.rglob(f"*-{op}.md") if _INPLACE_DOC.search(page.read_text())}
    return sorted(returned | paged)


def _returning_a_parameter(sources: str, names: set[str]) -> set[str]:
    """The functions of ``names`` some definition of which returns one of its ``at::Tensor &`` parameters as it
    came (``return self;``, ``return std::tie(k_cache, ckv_cache, k_rope, c_kv);``)."""
    found: set[str] = set()
    for match in re.finditer(r"\b(\w+)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*(?:const\s*)?\{", sources):
        if match.group(1) not in names:
            continue
        params = set(_TENSOR_PARAM.findall(match.group(2)))
        body = _body(sources, match.end())
        for returned in re.findall(r"\breturn\s+([^;]*);", body):
            if params & set(_returned_items(returned)):
                found.add(match.group(1))
    return found


def _body(sources: str, start: int) -> str:
    """The text of a function's body, from after its opening brace to the matching closing one."""
    depth, at = 1, start
    while depth and at < len(sources):
        depth += {"{": 1, "}": -1}.get(sources[at], 0)
        at += 1
    return sources[start:at]


def _returned_items(expr: str) -> list[str]:
    """The bare names a return statement hands back: ``x``, or each item of ``std::tie(...)``,
    ``std::make_tuple(...)``, ``std::tuple<...>(...)``."""
    expr = expr.strip()
    wrapped = re.fullmatch(r"std::(?:tie|make_tuple|tuple\s*<[^;]*?>)\s*\((.*)\)", expr, re.S)
    items = wrapped.group(1).split(",") if wrapped else [expr]
    return [item.strip() for item in items if re.fullmatch(r"\w+", item.strip())]


def render(schemas: list[str], quiet: list[str], source: str) -> str:
    """The table module's text."""
    rows = "".join(f"    {_quoted(s)},\n" for s in schemas)
    names = "".join(f'        "{name}",\n' for name in quiet)
    return (
        '"""The schemas of torch_npu ops (``torch.ops.npu``), written by ``tools/npu_table_build.py``: do not edit.\n\n'
        f"Source: {source}.\n"
        '"""\n\nfrom __future__ import annotations\n\n__all__ = ["SCHEMAS", "UNDECLARED"]\n\n'
        "# Every overload of every op of the yaml's ``custom`` section, as declared.\n"
        f"SCHEMAS: tuple[str, ...] = (\n{rows})\n\n"
        "# Ops whose kernel returns a tensor parameter, or whose page says it updates in place, while no schema of\n"
        "# theirs marks a write: what they write is unknown.\n"
        f"UNDECLARED: frozenset[str] = frozenset(\n    {{\n{names}    }}\n)\n"
    )


def _quoted(text: str) -> str:
    """A string literal as ruff formats it: double quotes, single where that saves escapes."""
    if '"' in text and "'" not in text:
        return "'" + text.replace("\\", "\\\\") + "'"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/npu_table_build.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("yaml", type=Path, help="op_plugin/config/op_plugin_functions.yaml")
    parser.add_argument("--sources", type=Path, help="the op-plugin checkout the yaml comes from")
    parser.add_argument("--commit", default="unknown commit", help="the op-plugin commit, named in the table")
    parser.add_argument("--check", action="store_true", help="exit 1 if the table differs")
    args = parser.parse_args(argv)
    schemas = custom_schemas(args.yaml.read_text(encoding="utf-8"))
    quiet = undeclared(schemas, args.sources) if args.sources else []
    source = f"Ascend/op-plugin {args.commit}, op_plugin/config/op_plugin_functions.yaml (its ``custom`` section)"
    text = render(schemas, quiet, source)
    if args.check:
        return 0 if TABLE.read_text(encoding="utf-8") == text else 1
    TABLE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
