"""The shortcuts that make a run faster give the answers of the slow ways they replace.

Each is checked against the plain computation it stands for: a node's children against
``ast.iter_child_nodes``, the first indent against tokenizing the whole module, an import key against
parsing every line, the facts kept per index against a new index, the run keys by dotted name against
a scan of the modules, and the collector's state after a run against the one before it.
"""

from __future__ import annotations

import ast
import gc
import io
import tokenize
from pathlib import Path

import pytest

from codegen.driver.modules import ModuleId
from codegen.driver.run import read_sources, run
from codegen.index.children import children
from codegen.index.index import build_index
from codegen.index.per_index import per_index
from codegen.rewrite import import_order
from codegen.rewrite.splice import _first_indent
from frontend_util import CALLER, LAYERS
from npudsl.cli import main

_REPO = Path(__file__).resolve().parents[2]
_SINGLETONS = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)

_CORNERS = """
def f(a, /, b=1, *args, c, d=2, **kw) -> int:
    global g
    x = {**kw, "k": a, None: b}
    y = lambda p, *, q=3, r: p
    match x:
        case Point(1, y=[2, *rest]) if rest:
            pass
        case {"k": v, **more}:
            nonlocal_free = f"{v!r:>{a}}"
    try:
        del x[1:2:3], y
    except* (E, F) as e:
        raise E from e
    async def g(): await h(); yield
    return (yield from z) if not a < b <= c else -a @ b
"""


def _reference_children(node: ast.AST) -> list[ast.AST]:
    return [child for child in ast.iter_child_nodes(node) if not isinstance(child, _SINGLETONS)]


def _trees() -> list[ast.Module]:
    sources = [_CORNERS, LAYERS, CALLER]
    sources += [path.read_text(encoding="utf-8") for path in sorted((_REPO / "codegen" / "index").glob("*.py"))]
    return [ast.parse(source) for source in sources]


def test_children_are_those_of_iter_child_nodes_less_the_singletons() -> None:
    nodes = [node for tree in _trees() for node in ast.walk(tree)]
    assert {type(n) for n in nodes} >= {ast.Dict, ast.Global, ast.MatchClass, ast.arguments, ast.TryStar}
    for node in nodes:
        assert children(node) == _reference_children(node), ast.dump(node)


def _indent_from_the_top(source: str) -> str:
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.INDENT:
            return token.string
    return "    "


@pytest.mark.parametrize(
    "source",
    [
        "x = 1\n",
        '"""Doc\n        indented inside the docstring\n"""\nimport os\n\n\nclass A:\n\tpass\n',
        "if x: pass\nfor i in y:\n   z = i\n",
        "x = (1,\n        2)\n@deco(\n    arg)\ndef f():\n  return 1\n",
        "if x: \\\n        pass\ndef f():\n     pass\n",
        "def f(\n        a): return a\nwhile a:\n b\n",
        "x = 1\rif x:\r  pass\r",
        "import a\r\nclass A:\r\n\tx = 1\r\n",
        "match x:\n    case 1:\n        pass\n",
    ],
)
def test_first_indent_is_the_first_indent_token_of_the_module(source: str) -> None:
    assert _first_indent(source, ast.parse(source)) == _indent_from_the_top(source)


@pytest.mark.parametrize(
    "text",
    ["x = 1\n", "# import os\nx = 1\n", "import os\n", "from . import a as b\n", "from __future__ import division\n"],
)
def test_import_key_is_that_of_parsing_the_line(text: str) -> None:
    import_order.clear_cache()
    nodes = ast.parse(text.strip()).body
    expected_none = len(nodes) != 1 or not isinstance(nodes[0], (ast.Import, ast.ImportFrom))
    key = import_order._key(text)
    assert (key is None) == expected_none
    assert import_order._key(text) == key  # kept: the same answer again


def test_per_index_answers_again_for_another_index() -> None:
    asked: list[object] = []

    @per_index
    def callees(index: object) -> int:
        asked.append(index)
        return len(index.callees)  # type: ignore[attr-defined]

    first, second = build_index([("layers", LAYERS)]), build_index([("layers", LAYERS), ("model", CALLER)])
    assert [callees(first), callees(first), callees(second), callees(first)] == [2, 2, 2, 2]
    assert [a is b for a, b in zip(asked, [first, second, first])] == [True, True, True] and len(asked) == 3


def test_key_of_is_the_one_module_of_that_dotted_name() -> None:
    one = ModuleId(key="src/pkg/ops", dotted="pkg.ops", package=False)
    twice = [ModuleId(key=f"{root}/pkg/util", dotted="pkg.util", package=False) for root in ("a", "b")]
    index = build_index([(one, "x = 1\n"), *((m, "y = 2\n") for m in twice)])
    assert index.key_of("pkg.ops") == "src/pkg/ops"
    assert index.key_of("pkg.util") == "pkg.util"  # two files: neither is certain
    assert index.key_of("src/pkg/ops") == "src/pkg/ops"
    assert index.key_of("pkg.other") == "pkg.other"


def _example_run() -> None:
    files = read_sources([(str(_REPO / "examples" / "core_split.py"), str(_REPO / "examples"))])
    assert not any(result.has_errors for result in run(files, target="aclgraph", jobs=1))


def test_a_run_leaves_the_collector_as_it_found_it() -> None:
    assert gc.isenabled() and not gc.get_freeze_count()
    _example_run()
    assert gc.isenabled() and not gc.get_freeze_count()
    gc.disable()
    try:
        _example_run()
        assert not gc.isenabled() and not gc.get_freeze_count()
    finally:
        gc.enable()


def test_check_leaves_the_collector_as_it_found_it(capsys: pytest.CaptureFixture[str]) -> None:
    """``npudsl check`` pauses the collector while the index is built, as ``run`` does, and restores it."""
    assert main(["check", str(_REPO / "examples" / "core_split.py")]) == 0
    capsys.readouterr()
    assert gc.isenabled() and not gc.get_freeze_count()
