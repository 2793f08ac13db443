"""The rule registry, the device profiles, the docs, and the cycle search on large graphs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codegen.check.diagnostics import Severity
from codegen.check.rules import RULES, Context, Finding, Rule, event_cycle
from codegen.check.validate import validate
from codegen.frontend.ir import CoreLimit, Events, Loc, ModuleIR, Stream, StreamFunction
from codegen.index.index import build_index
from npudsl.devices import DEFAULT_DEVICE, DEVICES, DeviceError, custom_device, get_device

DOCS = Path(__file__).resolve().parents[2] / "docs" / "check.md"


def test_codes_are_unique_and_in_their_ranges() -> None:
    codes = [rule.code for rule in RULES]
    assert len(codes) == len(set(codes)) >= 12
    for rule in RULES:
        assert rule.code.startswith("NPD5") == (rule.severity is Severity.WARNING)


def test_a_rule_takes_its_code_from_the_table_of_checks() -> None:
    with pytest.raises(ValueError, match="NPD401"):
        Rule(code="NPD401", find=lambda ctx: ())  # in no table row
    with pytest.raises(ValueError, match="NPD590"):
        Rule(code="NPD590", find=lambda ctx: ())  # a target's code, not a rule's
    assert (Rule(code="NPD505", find=lambda ctx: ()).severity, Rule(code="NPD201", find=lambda ctx: ()).severity) == (
        Severity.WARNING,
        Severity.ERROR,
    )


def test_docs_explain_every_code_and_device() -> None:
    text = DOCS.read_text(encoding="utf-8")
    headings = set(re.findall(r"^### (NPD\d{3})", text, re.MULTILINE))
    assert {rule.code for rule in RULES} | {"NPD001", "NPD002"} <= headings
    for name, device in DEVICES.items():
        assert re.search(rf"\| `{name}` \| {device.aic} \| {device.aiv} \|", text), name


def test_devices() -> None:
    assert DEFAULT_DEVICE == get_device("atlas-a2") == get_device(" Atlas-A2 ")
    assert (DEFAULT_DEVICE.aic, DEFAULT_DEVICE.aiv) == (24, 48)
    assert (get_device("atlas-a2-910b3").aic, get_device("atlas-a2-910b3").aiv) == (20, 40)
    assert custom_device("3,5").describe() == "--cores 3,5 (3 cube / 5 vector cores)"
    with pytest.raises(DeviceError, match="atlas-a3"):
        get_device("atlas-a9")


def _ring(size: int) -> ModuleIR:
    """``f0`` waits for what ``f1`` records, ..., ``f<size-1>`` waits for what ``f0`` records."""
    loc = Loc(line=1, col=1)
    functions = tuple(
        StreamFunction(
            owner="Ring",
            name=f"f{i}",
            loc=loc,
            stream=Stream(tag=f"s{i % 3}", priority=0, sync="manual", when=None, loc=loc),
            waits=(Events(events=(f"e{(i + 1) % size}",), when=None, loc=Loc(line=i + 1, col=6)),),
            records=(Events(events=(f"e{i}",), when=None, loc=loc),),
        )
        for i in range(size)
    )
    return ModuleIR(path="ring.py", module_name="ring", functions=functions)


def test_a_long_cycle_is_found_once_without_recursion() -> None:
    ir = _ring(3000)
    ctx = Context(ir=ir, index=build_index([]), target="aclgraph", device=DEFAULT_DEVICE)
    found = event_cycle.RULE.run(ctx)
    assert len(found) == 1 and (found[0].line, found[0].col) == (1, 6)
    assert ": Ring.f0 -> e1 -> Ring.f1 -> e2 -> Ring.f2 -> " in found[0].message
    assert found[0].message.endswith("Ring.f2999 -> e0 -> Ring.f0")
    assert found[0].message.count(" -> ") == 2 * 3000


def test_validate_defaults_to_the_default_device() -> None:
    loc = Loc(line=3, col=2)
    fn = StreamFunction(owner=None, name="f", loc=loc, core_limit=CoreLimit(aicore=24, vector=48, when=None, loc=loc))
    ir = ModuleIR(path="m.py", module_name="m", functions=(fn,))
    assert validate(ir, build_index([]), target="aclgraph") == ()
    small = validate(ir, build_index([]), target="aclgraph", device=get_device("atlas-a2-910b4"))
    assert [(d.code, d.line, d.col) for d in small] == [("NPD301", 3, 2)]


def test_findings_become_positioned_diagnostics() -> None:
    rule = Rule(code="NPD505", find=lambda ctx: [Finding(loc=Loc(line=7, col=9), message="m", hint="h")])
    ctx = Context(
        ir=ModuleIR(path="p.py", module_name="p", functions=()),
        index=build_index([]),
        target="aclgraph",
        device=DEFAULT_DEVICE,
    )
    assert [d.format() for d in rule.run(ctx)] == ["p.py:7:9: NPD505 m (hint: h)"]
