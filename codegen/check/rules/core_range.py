"""NPD301: a ``core_limit`` asks for more cube or vector cores than the device has.

A count given as a dotted name is read at call time: it is not checked here (NPD510 says so).
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.frontend.ir import CoreLimit
from npudsl import codes
from npudsl.devices import Device

__all__ = ["RULE", "out_of_range"]


def out_of_range(limit: CoreLimit, device: Device) -> bool:
    return _above(limit.aicore, device.aic) or _above(limit.vector, device.aiv)


def _above(count: int | str, cores: int) -> bool:
    return isinstance(count, int) and count > cores


def _find(ctx: Context) -> Iterator[Finding]:
    device = ctx.device
    for fn in ctx.ir.functions:
        limit = fn.core_limit
        if limit is None or not out_of_range(limit, device):
            continue
        yield Finding(
            loc=limit.loc,
            message=f"core_limit({limit.aicore}, {limit.vector}) on {fn.qualname} is out of range for "
            f"{device.describe()}",
            hint=f"ask for 1..{device.aic} cube and 1..{device.aiv} vector cores, or check for the right "
            "device with --device/--cores",
        )


RULE = Rule(code=codes.CORE_RANGE, find=_find)
