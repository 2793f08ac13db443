"""Every torch-npu API, backend name and option that generated code and ``npudsl.compile`` use, pinned to the wheel.

test_goldens checks what the golden files call; this file names, per target, what the
generator may spell (so an API only some inputs reach is pinned too), and the paths
``npudsl.compile`` takes: torchair's ``CompilerConfig`` modes, the ``npugraph_ex``
backend and its ``options=``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from npu_contract import ApiKind, ApiTable, api_references, lookup, verify_source
from npu_contract.fetch import WheelSource
from npudsl.graph_config import NPUGRAPH_EX_BACKEND, NPUGRAPH_EX_DEFAULTS, npugraph_ex_options
from npudsl.testing.standins._ops import AIR, SCHEMAS

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
_NPUGRAPH_EX_CONFIG = "torch_npu/dynamo/npugraph_ex/configs/compiler_config.py"

# target -> (real API, the parameters the generated code passes, in order)
PINNED: dict[str, dict[str, tuple[str, ...]]] = {
    "aclgraph": {
        "torchair.scope.npu_stream_switch": ("stream_tag", "stream_priority"),
        "torchair.scope.limit_core_num": ("op_aicore_num", "op_vectorcore_num"),
        "torchair.ops.npu_create_tagged_event": ("tag",),
        "torchair.ops.npu_record_tagged_stream": ("input", "tagged_stream"),
    },
    "ge": {
        "torchair.scope.npu_stream_switch": ("stream_tag", "stream_priority"),
        "torchair.scope.limit_core_num": ("op_aicore_num", "op_vectorcore_num"),
        "torchair.scope.npu_wait_tensor": ("self", "dependency"),
        "torchair.ops.record": (),
        "torchair.ops.wait": ("tensors",),
    },
    "npugraph_ex": {
        "torch.npu.Stream": (),
        "torch.npu.Event": (),
        "torch.npu.stream": (),
        "torch.npu.current_stream": (),
        "torch.npu.is_available": (),
        "torch.npu.npugraph_ex.scope.limit_core_num": ("op_aicore_num", "op_vectorcore_num"),
    },
}


def _params(table: ApiTable, name: str) -> tuple[str, ...]:
    entry, why = lookup(table, name)
    assert entry is not None, why or f"{name} is not in the wheel's sources"
    return tuple(p.name for p in entry.params or ())


@pytest.mark.parametrize("target, name", [(t, n) for t, names in PINNED.items() for n in names])
def test_pinned_api_exists_with_its_parameters(npu_table: ApiTable, target: str, name: str) -> None:
    wanted = PINNED[target][name]
    assert _params(npu_table, name)[: len(wanted)] == wanted


def test_every_torchair_call_the_generator_spells_is_pinned() -> None:
    """torchair.py spells what aclgraph and GE share (scopes), aclgraph/spelling.py aclgraph's events, and
    ge/spelling.py GE's own. The
    tagged-event records and waits call torchair's custom ops (``torch.ops.air``) by tag: their schemas are
    the stand-ins', which test_standins_wheel pins to the wheel's ``lib.define`` text."""
    spellings = ("torchair.py", "aclgraph/spelling.py", "ge/spelling.py")
    sources = [(ROOT / "codegen/targets" / name).read_text(encoding="utf-8") for name in spellings]
    spelled = {f"torchair.{s}" for text in sources for s in re.findall(r"\.((?:scope|ops)\.(?!air\b)[a-z_]+)\b", text)}
    assert spelled == {*PINNED["aclgraph"], *PINNED["ge"]}
    ops = {op for text in sources for op in re.findall(r"\.ops\.air\.([a-z_]+)\(", text)}
    assert ops == {"tagged_event_record", "tagged_event_wait"}
    assert all(SCHEMAS[AIR][op].schema.startswith(f"{op}(str tag,") for op in ops)


@pytest.mark.parametrize("target", list(PINNED))
def test_every_npu_api_in_the_goldens_is_pinned(npu_table: ApiTable, target: str) -> None:
    called = {
        r.name
        for path in sorted((GOLDEN / target).glob("**/*.py"))
        for r in api_references(path.read_text(encoding="utf-8"), npu_table)
    }
    assert called, f"no golden file of {target} calls torch-npu"
    modules = {n for n in called if npu_table.entries[n].kind is ApiKind.MODULE}  # import torchair, vars(torch.npu)
    methods = {n for n in called if n.rsplit(".", 1)[0] in ("torch.npu.Stream", "torch.npu.Event")}
    assert called - modules - methods <= set(PINNED[target])


def test_npugraph_ex_backend_is_registered_under_its_name(wheel: WheelSource) -> None:
    entry_points = next(m for m in wheel._names if m.endswith(".dist-info/entry_points.txt"))
    section = wheel.read(entry_points).split("[torch_dynamo_backends]")[1]
    assert re.search(rf"^{NPUGRAPH_EX_BACKEND} = torch_npu\.dynamo:", section, re.MULTILINE)
    dynamo = wheel.read("torch_npu/dynamo/__init__.py")
    assert f'NPUGRAPH_EX_BACKEND = "{NPUGRAPH_EX_BACKEND}"' in dynamo
    assert "_register_npu_backend(npugraph_ex_backend, NPUGRAPH_EX_BACKEND)" in dynamo


def _npugraph_ex_config(text: str) -> dict[str, tuple[object, list | None]]:
    """npugraph_ex's CompilerConfig options: name -> (default, choices or None)."""
    (cls,) = [n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == "CompilerConfig"]
    (init,) = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
    found: dict[str, tuple[object, list | None]] = {}
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and isinstance(target := stmt.targets[0], ast.Attribute):
            value = stmt.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "OptionValue":
                found[target.attr] = tuple(ast.literal_eval(a) for a in value.args)  # type: ignore[assignment]
            elif isinstance(value, ast.Constant):
                found[target.attr] = (value.value, None)
    return found


def test_npugraph_ex_memory_options_are_real_options(wheel: WheelSource) -> None:
    real = _npugraph_ex_config(wheel.read(_NPUGRAPH_EX_CONFIG))
    assert {name: real[name][0] for name in NPUGRAPH_EX_DEFAULTS} == NPUGRAPH_EX_DEFAULTS
    for kwargs in (
        {},
        {"mempool": (0, 1), "clone_outputs": True},
        {"reuse_within_graph": False, "clone_inputs": False},
    ):
        for name, value in npugraph_ex_options(**kwargs).items():
            choices = real[name][1]
            assert choices is None or value in choices, (name, value, choices)


def test_npugraph_ex_options_are_set_by_name(wheel: WheelSource) -> None:
    """``options=`` reaches the config as ``setattr(config, name, value)``, after a check that the name exists."""
    text = wheel.read(_NPUGRAPH_EX_CONFIG)
    assert "if not hasattr(config, option):" in text and "setattr(config, option, options[option])" in text
    compiler = wheel.read("torch_npu/dynamo/npugraph_ex/npu_fx_compiler.py")
    assert "_process_kwargs_options(compiler_config, kwargs)" in compiler


@pytest.mark.parametrize("mode", ["reduce-overhead", "max-autotune"])
def test_torchair_modes_npudsl_compile_sets(npu_table: ApiTable, mode: str) -> None:
    code = (
        "import torchair\nconfig = torchair.CompilerConfig()\n"
        f'config.mode = "{mode}"\nbackend = torchair.get_npu_backend(compiler_config=config)\n'
    )
    assert verify_source(code, npu_table) == []
