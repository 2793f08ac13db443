"""The stand-ins match torch-npu 2.13.0, read as text from the wheel (see conftest.py for offline runs)."""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable

import pytest
import torch

from npu_contract.fetch import WheelSource
from npudsl.testing import standins
from npudsl.testing.standins import _limits, _torchair
from npudsl.testing.standins._config import Option

_TORCHAIR = "torch_npu/dynamo/torchair/"
_REAL_NAMESPACE = {standins.AIR: "air", standins.NPUGRAPH_EX: "npugraph_ex"}


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


OPS = [(ns, name, spec) for ns, specs in standins.SCHEMAS.items() for name, spec in specs.items()]


@pytest.mark.parametrize("namespace, name, spec", OPS, ids=[f"{ns}.{n}" for ns, n, _ in OPS])
def test_schema_and_side_effect_as_in_the_wheel(wheel: WheelSource, namespace: str, name: str, spec) -> None:
    text = _flat(wheel.read(spec.source))
    assert f'define( """ {spec.schema} """ )' in text or f'define("{spec.schema}")' in text
    marked = f"has_side_effect(torch.ops.{_REAL_NAMESPACE[namespace]}.{name}.default)" in text
    assert marked == spec.side_effect
    packet = getattr(getattr(torch.ops, namespace), name)
    assert str(packet.default._schema) == f"{namespace}::{torch._C.parse_schema(spec.schema)}"
    assert (packet.default in torch.fx.node._side_effectful_functions) == spec.side_effect


SIGNATURES: list[tuple[str, str, Callable]] = [
    (_TORCHAIR + "scope/__init__.py", "npu_stream_switch", _torchair.npu_stream_switch),
    (_TORCHAIR + "scope/__init__.py", "limit_core_num", _torchair.limit_core_num),
    (_TORCHAIR + "scope/__init__.py", "super_kernel", _torchair.super_kernel),
    (_TORCHAIR + "scope/__init__.py", "npu_wait_tensor", _torchair.npu_wait_tensor),
    (_TORCHAIR + "ops/__init__.py", "npu_create_tagged_event", _torchair.npu_create_tagged_event),
    (_TORCHAIR + "ops/__init__.py", "npu_tagged_event_record", _torchair.npu_tagged_event_record),
    (_TORCHAIR + "ops/__init__.py", "npu_tagged_event_wait", _torchair.npu_tagged_event_wait),
    (_TORCHAIR + "ops/__init__.py", "npu_record_tagged_stream", _torchair.npu_record_tagged_stream),
    (_TORCHAIR + "ops/__init__.py", "record", _torchair.record),
    (_TORCHAIR + "ops/__init__.py", "wait", _torchair.wait),
    ("torch_npu/npu/npu_config.py", "set_stream_limit", _limits.set_stream_limit),
    ("torch_npu/npu/npu_config.py", "get_stream_limit", _limits.get_stream_limit),
    ("torch_npu/npu/npu_config.py", "reset_stream_limit", _limits.reset_stream_limit),
    ("torch_npu/npu/npugraph_ex/scope/__init__.py", "limit_core_num", _limits.limit_core_num),
]


def _real_parameters(source: str, name: str) -> list[tuple[str, str | None]]:
    (fn,) = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name]
    args = fn.args.args
    defaults = [None] * (len(args) - len(fn.args.defaults)) + [ast.unparse(d) for d in fn.args.defaults]
    return [(a.arg, d) for a, d in zip(args, defaults)]


@pytest.mark.parametrize("path, name, standin", SIGNATURES, ids=[f"{p.split('/')[-2]}.{n}" for p, n, _ in SIGNATURES])
def test_signature_as_in_the_wheel(wheel: WheelSource, path: str, name: str, standin: Callable) -> None:
    parameters = inspect.signature(inspect.unwrap(standin)).parameters.values()
    ours = [(p.name, None if p.default is inspect.Parameter.empty else repr(p.default)) for p in parameters]
    assert ours == _real_parameters(wheel.read(path), name)


def _options(group: object) -> list[tuple[str, str]]:
    """``self.<name> = OptionValue(<default>, <choices>)`` lines as the wheel spells them."""
    return [
        (name, f"self.{name} = OptionValue({value.default!r}, {value.choices!r})".replace("'", '"'))
        for name, value in vars(group).items()
        if isinstance(value, Option)
    ]


@pytest.mark.parametrize(
    "path, group",
    [
        (_TORCHAIR + "configs/compiler_config.py", standins.CompilerConfig()),
        (_TORCHAIR + "configs/debug_config.py", standins.CompilerConfig().debug.aclgraph),
        ("torch_npu/dynamo/npugraph_ex/configs/compiler_config.py", standins.NpuGraphExConfig()),
    ],
)
def test_config_options_and_defaults_as_in_the_wheel(wheel: WheelSource, path: str, group: object) -> None:
    text = wheel.read(path)
    assert [line for _, line in _options(group) if line not in text] == []
    assert "self.use_custom_pool = None" in wheel.read(_TORCHAIR + "configs/aclgraph_config.py")
