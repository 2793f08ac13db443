"""Load generated code as a module, with the stand-in torchair, and strip decorators for references."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

from codegen.driver.api import transform_source
from npudsl.schedule import DECORATOR_FIELDS

DECORATORS = set(DECORATOR_FIELDS)


def load(code: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module  # dataclasses and pickling look modules up
    exec(compile(code, module.__file__, "exec"), module.__dict__)
    return module


def transformed(path: Path, target: str = "aclgraph") -> str:
    return transform_source(path.read_text(encoding="utf-8"), path=str(path), target=target)


def undecorated(path: Path) -> str:
    """The same source with every npudsl decorator and import removed: the reference model."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if hasattr(node, "decorator_list"):
            node.decorator_list = [d for d in node.decorator_list if _name(d) not in DECORATORS]
    tree.body = [n for n in tree.body if not (isinstance(n, ast.ImportFrom) and n.module == "npudsl")]
    return ast.unparse(tree)


def _name(node: ast.expr) -> str | None:
    target = node.func if isinstance(node, ast.Call) else node
    return getattr(target, "id", None) or getattr(target, "attr", None)
