"""Helpers of the front-end tests: transform or check sources as one run, and run the CLI in a subprocess."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
from pathlib import Path

from codegen.check.diagnostics import Diagnostic
from codegen.check.rules.pipeline import check_source
from codegen.driver.api import transform_with_index
from codegen.driver.run import SourceFile, read_sources
from codegen.index.index import build_index
from npudsl.devices import DEFAULT_DEVICE

__all__ = ["CALLER", "LAYERS", "check", "cli", "codes", "load", "source_files", "transform", "write_tree"]


def _source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def transform(source: str, target: str = "aclgraph", module: str = "m") -> tuple[str, tuple[Diagnostic, ...]]:
    """(code, diagnostics) of ``source`` transformed alone, as one run."""
    source = _source(source)
    index = build_index([(module, source)])
    return transform_with_index(source, path=f"{module}.py", module_name=module, index=index, target=target)


def check(source: str, module: str = "m") -> tuple[Diagnostic, ...]:
    source = _source(source)
    index = build_index([(module, source)])
    return check_source(
        source, path=f"{module}.py", module_name=module, index=index, target="aclgraph", device=DEFAULT_DEVICE
    )


def codes(diagnostics: tuple[Diagnostic, ...]) -> list[str]:
    """``line:col CODE`` for each diagnostic."""
    return [f"{d.line}:{d.col} {d.code}" for d in diagnostics]


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_source(text), encoding="utf-8")


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``npudsl ARGS`` in a subprocess."""
    script = "import sys; from npudsl.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def load(code: str, name: str) -> types.ModuleType:
    """Execute generated code as a module named ``name``."""
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module
    exec(compile(code, module.__file__, "exec"), module.__dict__)  # noqa: S102 - generated code under test
    return module


# Two modules of a run: stream functions (a decorated class, a decorated method) and a caller of the class.
LAYERS = """
from torch import nn

from npudsl import on_stream


@on_stream("shared")
class SharedExpert(nn.Module):
    def forward(self, x):
        return x * 2


class Block(nn.Module):
    @on_stream("side")
    def branch(self, x):
        return x + 1
"""
CALLER = """
from torch import nn

from layers import SharedExpert


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = SharedExpert()

    def forward(self, x):
        return self.shared(x) + x
"""


def source_files(root: Path, names: dict[str, str]) -> list[SourceFile]:
    """``names`` (path under ``root`` -> text) written and read back as the files of one run."""
    write_tree(root, names)
    return read_sources((str(root / name), str(root)) for name in names)
