"""Which inputs the ``forward`` of each of torch's module classes writes in place (written by
``torch_layer_writes_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["WRITES"]

# class -> each forward parameter it may write, as p@i (i-th after the object), with :q@j where the
# constructor must be given its parameter q (j-th after the object; =: its default is None or False)
WRITES: dict[str, str] = {
    "CELU": "input@0:inplace@1=",
    "Dropout": "input@0:inplace@1=",
    "Dropout1d": "input@0:inplace@1=",
    "Dropout2d": "input@0:inplace@1=",
    "Dropout3d": "input@0:inplace@1=",
    "ELU": "input@0:inplace@1=",
    "Hardsigmoid": "input@0:inplace@0=",
    "Hardswish": "input@0:inplace@0=",
    "Hardtanh": "input@0:inplace@2=",
    "LeakyReLU": "input@0:inplace@1=",
    "Mish": "input@0:inplace@0=",
    "RReLU": "input@0:inplace@2=",
    "ReLU": "input@0:inplace@0=",
    "ReLU6": "input@0:inplace@0=",
    "SELU": "input@0:inplace@0=",
    "SiLU": "input@0:inplace@0=",
    "Threshold": "input@0:inplace@2=",
}
