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
the yaml came from), the kernels of an op that declares no write are read (``npu_kernels.py``):

- ``KERNEL_WRITES``: what it writes, where every aclnn call it makes is also made by a declared op, which says
  which positions of that call are read only (``npu_kv_rmsnorm_rope_cache`` calls ``aclnnKvRmsNormRopeCache`` as
  ``npu_kv_rmsnorm_rope_cache_v2`` does, which declares ``Tensor(a!) k_cache, Tensor(b!) ckv_cache`` and its other
  tensors plain: it writes its two caches; ``npu_grouped_matmul_add`` hands ``self`` to ``aclnnGroupedMatmulAdd``
  where ``npu_grouped_matmul_add_`` declares it written, and returns a clone);
- ``UNDECLARED``: its writes are not known, where its kernel returns a tensor parameter, hands one to such a
  position, or its page under ``docs/`` says it updates in place, and the kernel does not say the rest (an aclnn
  call no declared op makes: ``aclnnApplyRotaryPosEmbV2``, ``aclnnDequantRopeQuantKvcache``,
  ``aclnnMlaPrologV2WeightNz``, ``aclnnDistributeBarrier``; an aclops kernel; a parameter handed to a helper);
  the transformer takes it to write every argument;
- ``RETURNED``: the results its kernel returns as parameters, as they came (``return std::tie(k_cache,
  ckv_cache, k_rope, c_kv)``): those results are the arguments' memory.

Standard library only (the yaml's ``- func:`` lines and the
kernels are read as text).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from codegen.lower.flow.table_files import kept_table

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as ``python tools/npu_table_build.py``

from npu_kernels import Kernel, kernels, passed_written, read_positions, returned, written  # noqa: E402
from npu_settled import SETTLED  # noqa: E402

TABLE = Path(__file__).resolve().parent.parent / "codegen" / "lower" / "flow" / "npu_table.py"
_FUNC = re.compile(r"^  - func: (.+?)\s*$")
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


@dataclass(frozen=True)
class KernelFacts:
    """What the kernels say beyond the schemas (``npu_kernels.py``), schema names throughout."""

    undeclared: list[str]  # ops whose kernel writes an argument no schema of theirs marks, which is not known
    writes: dict[str, list[str]]  # ops whose kernel writes arguments no schema of theirs marks: which
    returned: dict[str, list[tuple[int, str]]]  # ops whose kernel returns an argument as it came: where


def kernel_facts(schemas: list[str], root: Path) -> KernelFacts:
    """The ops none of whose schemas marks a write whose kernel writes an argument (it hands it to an aclnn call
    at a position a declared op writes, returns it, or its page says it updates in place), with what it writes
    where the kernel says; and the arguments such ops return as they came."""
    declared = {op_name(s) for s in schemas if "!" in s.split("->", 1)[0]}
    quiet = sorted({op_name(s) for s in schemas} - declared)
    found = kernels(
        "\n".join(p.read_text(errors="ignore") for p in sorted((root / "op_plugin" / "ops").rglob("*.cpp")))
    )
    reads = read_positions([(k, _declared_writes(schemas, k)) for op in sorted(declared) for k in found.get(op, [])])
    docs = root / "docs"
    paged = {op for op in quiet for page in docs.rglob(f"*-{op}.md") if _INPLACE_DOC.search(page.read_text())}
    facts = KernelFacts([], {}, {})
    for op in quiet:
        names, defined = _schema_names(schemas, op), found.get(op, [])
        ops = [k for k in defined if names is not None and len(k.params) == len(names)]
        back = sorted({(at, names[k.params.index(p)]) for k in ops for at, p in returned(k)})  # type: ignore[index]
        writes = [written(k, reads) for k in ops]
        hidden = op in paged or any(any(returned(k)) or passed_written(k, reads) for k in defined)
        if back:
            facts.returned[op] = back
        if ops and len(ops) == len(defined) and all(w is not None for w in writes) and any(writes):
            facts.writes[op] = sorted({names[k.params.index(p)] for k, w in zip(ops, writes) for p in w or ()})  # type: ignore[index]
        elif hidden and op in SETTLED:  # CANN's declaration of its callee says what (``npu_settled.py``)
            facts.writes[op] = list(SETTLED[op].writes)
        elif hidden:
            facts.undeclared.append(op)
    return facts


def _schema_names(schemas: list[str], op: str) -> list[str] | None:
    """The argument names of ``op``'s unnamed overload, in order (the kernel named ``op`` implements it)."""
    found = [s for s in schemas if s.split("(", 1)[0] == op]
    if len(found) != 1:
        return None
    arguments = found[0].split("(", 1)[1].rpartition(") ->")[0]
    return [a.split("=")[0].split()[-1] for a in _arguments(arguments) if a != "*"]


def _declared_writes(schemas: list[str], kernel: Kernel) -> set[str]:
    """The kernel's parameters that its op's unnamed overload types ``Tensor(a!)`` (matched by position)."""
    found = [s for s in schemas if s.split("(", 1)[0] == kernel.name]
    if len(found) != 1:
        return set(kernel.params)  # no schema read: no position of its calls is known to be read only
    arguments = [a for a in _arguments(found[0].split("(", 1)[1].rpartition(") ->")[0]) if a != "*"]
    if len(arguments) != len(kernel.params):
        return set(kernel.params)
    return {p for p, a in zip(kernel.params, arguments) if "!" in a.split()[0]}


def _arguments(text: str) -> list[str]:
    """A schema's argument list split at its top-level commas."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(text):
        depth += 1 if char in "([" else -1 if char in ")]" else 0
        if char == "," and depth == 0:
            parts.append(text[start:at].strip())
            start = at + 1
    return [p for p in [*parts, text[start:].strip()] if p]


def undeclared(schemas: list[str], root: Path) -> list[str]:
    """The ops of :func:`kernel_facts` whose writes are not known."""
    return kernel_facts(schemas, root).undeclared


def render(schemas: list[str], quiet: list[str], source: str, facts: KernelFacts | None = None) -> str:
    """The table module's text."""
    facts = facts or KernelFacts(quiet, {}, {})
    rows = "".join(f"    {_quoted(s)},\n" for s in schemas)
    names = "".join(f'        "{name}",\n' for name in facts.undeclared)
    unknown = f"frozenset(\n    {{\n{names}    }}\n)" if names else "frozenset()"
    writes = "".join(_settled(op) + f'    "{op}": {_strings(params)},\n' for op, params in sorted(facts.writes.items()))
    back = "".join(f'    "{op}": {_pairs(pairs)},\n' for op, pairs in sorted(facts.returned.items()))
    return (
        '"""The schemas of torch_npu ops (``torch.ops.npu``), written by ``tools/npu_table_build.py``: do not edit.\n\n'
        f"Source: {source}.\n"
        '"""\n\nfrom __future__ import annotations\n\n'
        '__all__ = ["KERNEL_WRITES", "RETURNED", "SCHEMAS", "UNDECLARED"]\n\n'
        "# Every overload of every op of the yaml's ``custom`` section, as declared.\n"
        f"SCHEMAS: tuple[str, ...] = (\n{rows})\n\n"
        "# Ops whose kernel returns a tensor parameter, or whose page says it updates in place, while no schema of\n"
        "# theirs marks a write, and whose kernel does not say what it writes: what they write is unknown.\n"
        f"UNDECLARED: frozenset[str] = {unknown}\n\n"
        "# Ops no schema of which marks a write whose kernel writes these arguments: it hands them to an aclnn call\n"
        "# at a position a declared op calling the same function writes, and the others where such ops read only;\n"
        "# or, where no declared op makes its calls, what CANN's declaration of them says (the line above each).\n"
        f"KERNEL_WRITES: dict[str, tuple[str, ...]] = {{\n{writes}}}\n\n"
        "# Ops no schema of which marks a write whose kernel returns arguments as they came: (result position,\n"
        "# argument); position 0 of an op returning one tensor is that tensor.\n"
        f"RETURNED: dict[str, tuple[tuple[int, str], ...]] = {{\n{back}}}\n"
    )


def _settled(op: str) -> str:
    """The comment above an op that ``npu_settled.py`` settles: the sources that say what it writes."""
    return f"    # {SETTLED[op].source}\n" if op in SETTLED else ""


def _strings(names: list[str]) -> str:
    return "(" + ", ".join(f'"{n}"' for n in names) + ("," if len(names) == 1 else "") + ")"


def _pairs(pairs: list[tuple[int, str]]) -> str:
    return "(" + ", ".join(f'({at}, "{n}")' for at, n in pairs) + ("," if len(pairs) == 1 else "") + ")"


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
    facts = kernel_facts(schemas, args.sources) if args.sources else KernelFacts([], {}, {})
    source = f"Ascend/op-plugin {args.commit}, op_plugin/config/op_plugin_functions.yaml (its ``custom`` section)"
    text = render(schemas, facts.undeclared, source, facts)
    return kept_table(TABLE, text, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
