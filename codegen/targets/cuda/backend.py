"""``npudsl.compile(target="cuda")``: inductor, with the user's own options (``mode="reduce-overhead"``
captures CUDA graphs); it takes no graph memory options."""

from __future__ import annotations

from typing import Any

from codegen.targets.base import CompileArgs

__all__ = ["compile_args"]


def compile_args(options: dict[str, Any]) -> CompileArgs:
    return {"backend": "inductor"}
