"""What the targets' backends share: the error for a target whose software is not installed, and torchair.

``npudsl.compile`` asks a target for its ``torch.compile`` arguments before it touches the model, so a
target that cannot run here says what it needs and changes nothing. Nothing is imported until asked.
"""

from __future__ import annotations

from typing import Any

from npudsl.errors import NpudslError

__all__ = ["missing", "torchair"]


def missing(target: str, needs: str) -> NpudslError:
    return NpudslError(
        f"target {target!r} needs {needs}; use target='portable' to run and check the model on CPU or CUDA"
    )


def torchair(target: str) -> Any:
    """The ``torchair`` module, or the error saying ``target`` needs it."""
    try:
        import torchair
    except ImportError:
        raise missing(target, "torch_npu with torchair (an Ascend NPU and CANN)") from None
    return torchair
