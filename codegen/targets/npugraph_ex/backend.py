"""``npudsl.compile(target="npugraph_ex")``: the backend torch_npu registers, with seed 003's graph memory
options as its ``options=`` (``npudsl.graph_config.npugraph_ex_options``)."""

from __future__ import annotations

from typing import Any

from codegen.targets import needs
from codegen.targets.base import CompileArgs

__all__ = ["compile_args"]


def _registered(name: str, target: str) -> str:
    """``name`` if dynamo knows a backend by it (torch_npu registers npugraph_ex through an entry point)."""
    import torch._dynamo

    try:
        torch._dynamo.lookup_backend(name)
    except torch._dynamo.exc.InvalidBackend:
        raise needs.missing(target, f"torch_npu (2.13 or later), which registers the {name!r} backend") from None
    return name


def compile_args(options: dict[str, Any]) -> CompileArgs:
    from npudsl.graph_config import NPUGRAPH_EX_BACKEND, npugraph_ex_options

    settings = npugraph_ex_options(**options)  # contradictions fail before the backend is looked up
    return {"backend": _registered(NPUGRAPH_EX_BACKEND, "npugraph_ex"), "options": settings}
