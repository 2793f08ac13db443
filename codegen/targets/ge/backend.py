"""``npudsl.compile(target="ge")``: torchair max-autotune (GE); it takes no graph memory options."""

from __future__ import annotations

from typing import Any

from codegen.targets import needs
from codegen.targets.base import CompileArgs

__all__ = ["compile_args"]


def compile_args(options: dict[str, Any]) -> CompileArgs:
    torchair = needs.torchair("ge")
    config = torchair.CompilerConfig()
    config.mode = "max-autotune"
    return {"backend": torchair.get_npu_backend(compiler_config=config)}
