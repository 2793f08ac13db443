"""``npudsl.compile(target="aclgraph")``: torchair reduce-overhead, with seed 003's graph memory options
as CompilerConfig settings (``npudsl.graph_config.aclgraph_options``, docs/contract.md)."""

from __future__ import annotations

from typing import Any

from codegen.targets import needs
from codegen.targets.base import CompileArgs

__all__ = ["compile_args"]


def compile_args(options: dict[str, Any]) -> CompileArgs:
    from npudsl.graph_config import aclgraph_options, build_compiler_config

    settings = aclgraph_options(**options)  # contradictions fail before anything is imported
    torchair = needs.torchair("aclgraph")
    config = build_compiler_config(settings, factory=torchair.CompilerConfig)
    return {"backend": torchair.get_npu_backend(compiler_config=config)}
