"""The source of one method in generated code, for tests that assert what a single caller got.

Tests used to cut the text from ``def name(`` to the next ``def``, a search that silently took the rest of the
module when its pattern was mistyped; this reads the function from the parsed module instead, and fails
loudly when the method is not there.
"""

from __future__ import annotations

import ast

__all__ = ["method_source"]


def method_source(code: str, name: str) -> str:
    """The text of the first function or method called ``name`` in ``code`` (decorators excluded)."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            segment = ast.get_source_segment(code, node, padded=True)
            assert segment is not None
            return segment
    raise AssertionError(f"no function {name!r} in the generated code:\n{code}")
