"""Run one idiom: transformed for ``portable``, compiled whole with the race checker, against the undecorated model."""

from __future__ import annotations

import ast
import itertools
from typing import Any

import torch
from transform.generated import DECORATORS, load

from codegen.driver.api import transform_source
from npudsl.race import npudsl_backend

__all__ = ["check_idiom", "generated"]

_COUNT = itertools.count()


def generated(source: str, target: str = "portable") -> str:
    return transform_source(source, path="idiom.py", target=target)


def _undecorated(source: str) -> str:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if hasattr(node, "decorator_list"):
            node.decorator_list = [
                d for d in node.decorator_list if getattr(getattr(d, "func", d), "id", None) not in DECORATORS
            ]
    tree.body = [n for n in tree.body if not (isinstance(n, ast.ImportFrom) and n.module == "npudsl")]
    return ast.unparse(tree)


def _run(code: str, compiled: bool, *, fullgraph: bool = True, **build: Any) -> Any:
    module = load(code, f"idiom_{next(_COUNT)}")
    torch.manual_seed(0)
    model = module.Model(**build)
    inputs = module.inputs()
    if compiled:
        model = torch.compile(model, backend=npudsl_backend, fullgraph=fullgraph)
    return model(*inputs)


def check_idiom(source: str, *, fullgraph: bool = True, **build: Any) -> str:
    """The portable output of ``source``: race-free in every captured graph (else ``StreamRaceError``) and
    equal to the undecorated model; returned for further assertions."""
    code = generated(source)
    expected = _run(_undecorated(source), False, **build)
    actual = _run(code, True, fullgraph=fullgraph, **build)
    for want, got in zip(torch.utils._pytree.tree_leaves(expected), torch.utils._pytree.tree_leaves(actual)):
        assert torch.equal(want, got)
    return code
