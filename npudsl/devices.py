"""Device profiles for ``npudsl check --device NAME``: how many cube (AIC) and vector (AIV) cores a device has.

Where each count comes from is written down in ``docs/check.md`` (section "Devices").
"""

from __future__ import annotations

import re

import attrs
from attrs import validators as v

__all__ = ["DEFAULT_DEVICE", "DEVICES", "Device", "DeviceError", "custom_device", "get_device"]


class DeviceError(ValueError):
    """An unknown device name or a malformed ``--cores`` value (a usage error)."""


@attrs.frozen(kw_only=True)
class Device:
    """A device's core counts: ``aic`` cube cores and ``aiv`` vector cores (per die, for two-die chips)."""

    name: str
    aic: int = attrs.field(validator=v.ge(1))
    aiv: int = attrs.field(validator=v.ge(1))
    chips: str = ""

    def describe(self) -> str:
        return f"{self.name} ({self.aic} cube / {self.aiv} vector cores)"


DEVICES: dict[str, Device] = {
    d.name: d
    for d in (
        Device(name="atlas-a2", aic=24, aiv=48, chips="Ascend 910B1, 910B2, 910B2C"),
        Device(name="atlas-a2-910b3", aic=20, aiv=40, chips="Ascend 910B3"),
        Device(name="atlas-a2-910b4", aic=20, aiv=40, chips="Ascend 910B4"),
        Device(name="atlas-a3", aic=24, aiv=48, chips="Ascend 910C (910_93xx), per die"),
    )
}

DEFAULT_DEVICE = DEVICES["atlas-a2"]

_CORES = re.compile(r"\s*(\d{1,6})\s*,\s*(\d{1,6})\s*\Z", re.ASCII)


def get_device(name: str) -> Device:
    """The profile called ``name`` (case-insensitive); :class:`DeviceError` lists the known ones."""
    found = DEVICES.get(name.strip().lower())
    if found is None:
        raise DeviceError(
            f"unknown device {name!r}; known devices: {', '.join(sorted(DEVICES))} "
            "(or give the counts with --cores AIC,AIV)"
        )
    return found


def custom_device(cores: str) -> Device:
    """``"24,48"`` -> a device with 24 cube and 48 vector cores."""
    match = _CORES.match(cores)
    if match is None or min(int(match[1]), int(match[2])) < 1:
        raise DeviceError(f"--cores {cores!r} is not two positive integers AIC,AIV (e.g. --cores 24,48)")
    aic, aiv = int(match[1]), int(match[2])
    return Device(name=f"--cores {aic},{aiv}", aic=aic, aiv=aiv)
