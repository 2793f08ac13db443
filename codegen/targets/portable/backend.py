"""``npudsl.compile(target="portable")``: the race checker as the backend, with seed 003's graph memory.

Every captured graph is checked for cross-stream races, run as captured, and its outputs live as graph
memory (using one after a later replay overwrote it raises ``StaleOutputError``).
"""

from __future__ import annotations

from typing import Any

from codegen.targets.base import CompileArgs

__all__ = ["compile_args"]


def compile_args(options: dict[str, Any]) -> CompileArgs:
    from npudsl.graph_config import graph_memory
    from npudsl.race import portable_backend

    return {"backend": portable_backend(graph_memory(**options))}
