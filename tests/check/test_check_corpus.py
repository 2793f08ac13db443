"""A real corpus: every ``.py`` of the installed torch's ``torch/nn``, as is and decorated.

As is, no file uses npudsl: check reports nothing and transform changes nothing,
byte for byte. Decorated (a decorator put on every top-level function and method),
check and transform never fail inside, every position is in the file, a file with
an error is never changed, and every result parses and transforms to itself.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable

import pytest

from codegen.check.diagnostics import Severity
from codegen.check.rules.pipeline import check_file, check_source
from codegen.driver.api import transform_with_index
from codegen.driver.run import SourceFile, discover, index_run, read_sources, run
from codegen.index.index import build_index
from npudsl.devices import DEFAULT_DEVICE

torch_nn = pytest.importorskip("torch.nn")
ROOT = os.path.dirname(torch_nn.__file__)
DECORATORS = (
    '@npudsl.on_stream("side")',
    '@npudsl.records("done")',
    '@npudsl.after("done")',
    "@npudsl.core_limit(8, 16)",
    "@npudsl.keep_output",
    '@npudsl.on_stream("copy", sync="manual")',
)


@pytest.fixture(scope="module")
def corpus() -> list[SourceFile]:
    files = read_sources(discover([ROOT]))
    assert len(files) > 50
    return files


def test_check_reports_nothing_on_plain_torch(corpus: list[SourceFile]) -> None:
    index = index_run(corpus)
    reports = [check_file(f, index, target="aclgraph", device=DEFAULT_DEVICE) for f in corpus]
    assert [(r.path, r.diagnostics, r.internal_error) for r in reports if r.diagnostics or r.internal_error] == []


def test_transform_changes_nothing_in_plain_torch(corpus: list[SourceFile]) -> None:
    results = run(corpus, target="aclgraph", jobs=1)
    assert [r.file.path for r in results if r.internal_error or r.diagnostics or r.changed] == []


def test_naming_npudsl_alone_changes_nothing(corpus: list[SourceFile]) -> None:
    sources = [(f"corpus{i}", (f.source or "") + "\nimport npudsl\n") for i, f in enumerate(corpus)]
    index = build_index(sources)
    for (module, source), file in zip(sources, corpus):
        code, found = transform_with_index(source, path=file.path, module_name=module, index=index, target="aclgraph")
        assert (code, found) == (source, ()), file.path
        assert (
            check_source(
                source, path=file.path, module_name=module, index=index, target="aclgraph", device=DEFAULT_DEVICE
            )
            == ()
        )


def decorate(source: str, pick: Callable[[int], str]) -> str:
    """``source`` with ``pick(i)`` above the i-th top-level function or method (and ``import npudsl``)."""
    lines = source.splitlines(keepends=True)
    inserts = []
    for i, fn in enumerate(_top_level_functions(ast.parse(source))):
        first = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
        text = lines[first - 1]
        if text.lstrip().startswith(("@", "def ", "async def ")):
            inserts.append((first, text[: len(text) - len(text.lstrip())] + pick(i) + "\n"))
    for line, decorator in sorted(inserts, reverse=True):
        lines.insert(line - 1, decorator)
    return "import npudsl\n" + "".join(lines)


def _top_level_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    found = []
    for node in tree.body:
        body = node.body if isinstance(node, ast.ClassDef) else [node]
        found.extend(n for n in body if isinstance(n, kinds))
    return found


def test_decorated_torch_never_breaks(corpus: list[SourceFile]) -> None:
    sources = [
        (f"corpus{i}", decorate(f.source or "", lambda k, i=i: DECORATORS[(i + k) % len(DECORATORS)]))
        for i, f in enumerate(corpus)
    ]
    index = build_index(sources)
    clean = 0
    for (module, source), file in zip(sources, corpus):
        found = check_source(
            source, path=file.path, module_name=module, index=index, target="aclgraph", device=DEFAULT_DEVICE
        )
        code, diagnostics = transform_with_index(
            source, path=file.path, module_name=module, index=index, target="aclgraph"
        )
        last = len(source.splitlines()) + 1
        assert all(1 <= d.line <= last and d.col >= 1 for d in found + diagnostics), file.path
        if any(d.severity is Severity.ERROR for d in diagnostics):
            assert code == source, file.path
            continue
        clean += 1
        ast.parse(code)
        again = transform_with_index(
            code, path=file.path, module_name=module, index=build_index([(module, code)]), target="aclgraph"
        )[0]
        assert again == code, f"{file.path}: transforming the output changed it"
    assert clean > 20
