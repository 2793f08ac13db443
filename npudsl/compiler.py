"""``npudsl.compile``: transform the model's classes in-process, then ``torch.compile`` it.

Each target maps to a backend factory in :data:`BACKENDS`; a factory either
returns a ``torch.compile`` backend or raises :class:`NpudslError` explaining what
the target needs. Factories run before the model is touched, so an unusable
target changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from npudsl.errors import NpudslError

__all__ = ["BACKENDS", "compile_model"]

Backend = Callable[..., Any]


def _portable() -> Backend:
    from npudsl.race import npudsl_backend

    return npudsl_backend


def _needs_torchair(target: str) -> Callable[[], Backend]:
    def factory() -> Backend:
        raise NpudslError(
            f"target {target!r} needs torch_npu with torchair (an Ascend NPU and CANN); "
            "use target='portable' to run and check the model on CPU or CUDA"
        )

    return factory


def _not_compiled(target: str) -> Callable[[], Backend]:
    def factory() -> Backend:
        raise NpudslError(
            f"target {target!r} is for `npudsl transform`; npudsl.compile supports 'portable' here"
        )

    return factory


BACKENDS: dict[str, Callable[[], Backend]] = {
    "portable": _portable,
    "aclgraph": _needs_torchair("aclgraph"),
    "ge": _needs_torchair("ge"),
    "npugraph_ex": _needs_torchair("npugraph_ex"),
    "cuda": _not_compiled("cuda"),
}


def compile_model(model: Any, target: str = "portable", **torch_compile_kwargs: Any) -> Any:
    """Transform ``model``'s classes for ``target`` (swapping its instances' classes) and ``torch.compile`` it.

    With ``portable``, the backend checks every captured graph for cross-stream
    races (raising :class:`~npudsl.errors.StreamRaceError`) and runs it as captured.
    """
    if target not in BACKENDS:
        raise NpudslError(f"unknown target {target!r}; choose one of {', '.join(sorted(BACKENDS))}")
    if "backend" in torch_compile_kwargs:
        raise NpudslError("npudsl.compile picks the backend from the target; do not pass backend=")
    backend = BACKENDS[target]()
    import torch

    from npudsl.runtime.loader import swap_classes

    swap_classes(model, target)
    return torch.compile(model, backend=backend, **torch_compile_kwargs)
