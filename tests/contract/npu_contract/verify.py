"""Check a generated Python source against an API table (names, keywords, counts)."""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable

import libcst as cst
from libcst.metadata import ExpressionContext, ExpressionContextProvider, MetadataWrapper, PositionProvider

from npu_contract.binding import check_arguments
from npu_contract.model import ApiEntry, ApiKind, ApiTable, ConfigTree, Problem
from npu_contract.names import FileNames, collect_names
from npu_contract.pysource import dotted

__all__ = ["api_references", "lookup", "verify_config_paths", "verify_source"]


def _suggest(table: ApiTable, name: str) -> str:
    parent = name.rsplit(".", 1)[0] + "."
    siblings = [k for k in table.entries if k.startswith(parent) and "." not in k[len(parent) :]]
    close = difflib.get_close_matches(name, siblings, n=1, cutoff=0.8)
    return f"; did you mean {close[0]}?" if close else ""


def lookup(table: ApiTable, name: str) -> tuple[ApiEntry | None, str | None]:
    """(entry, None) if `name` exists; (None, None) if it cannot be known; else (None, why)."""
    if name in table.entries:
        return table.entries[name], None
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        parent = table.entries.get(".".join(parts[:cut]))
        if parent is None:
            continue
        if parent.kind is ApiKind.VALUE:
            return None, None
        if parent.kind is ApiKind.MODULE and not parent.closed:
            return None, f"{parent.name} is not indexed, so {name} cannot be verified"
        if parent.kind is ApiKind.CLASS and not parent.closed:
            return None, f"{name} is not defined in the Python sources of {parent.name} (its base is compiled code)"
        return None, f"{name} does not exist{_suggest(table, name)}"
    return None, f"{name} does not exist"


def _config_problem(tree: ConfigTree, path: str, *, store: bool) -> str | None:
    parts = path.split(".")
    for cut in range(1, len(parts) + 1):
        head = ".".join(parts[:cut])
        if head in tree.leaves:
            return None if cut == len(parts) or not store else f"config option {head} has no field {parts[cut]}"
        if head not in tree.nodes:
            close = difflib.get_close_matches(head, [*tree.leaves, *tree.nodes], n=1, cutoff=0.8)
            hint = f"; did you mean {close[0]}?" if close else ""
            return f"CompilerConfig has no option {head}{hint}"
    return None if not store else f"{path} is a group of options, not an option"


def verify_config_paths(paths: Iterable[str], tree: ConfigTree) -> list[Problem]:
    """Problems (line 0) for dotted CompilerConfig paths that are not assignable options."""
    found = ((p, _config_problem(tree, p, store=True)) for p in paths)
    return [Problem(line=0, col=0, name=p, message=msg) for p, msg in found if msg]


class _Checker(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, ExpressionContextProvider)

    def __init__(self, module: cst.Module, table: ApiTable, names: FileNames) -> None:
        super().__init__()
        self.module, self.table, self.names = module, table, names
        self.problems: list[Problem] = []
        self.references: list[Problem] = []
        self._done: set[int] = set()

    def _report(self, node: cst.CSTNode, name: str, message: str) -> None:
        start = self.get_metadata(PositionProvider, node).start
        self.problems.append(Problem(line=start.line, col=start.column + 1, name=name, message=message))

    def _qualified(self, node: cst.BaseExpression) -> str | None:
        name = dotted(node)
        qualified = self.names.qualify(name) if name else None
        return qualified if qualified and self.table.covers(qualified) else None

    def _config_path(self, name: str) -> str | None:
        prefix = f"{self.table.config_class}."
        if self.table.config is None or not name.startswith(prefix) or name in self.table.entries:
            return None
        return name[len(prefix) :]

    def _check_name(self, node: cst.CSTNode, name: str, *, store: bool = False) -> ApiEntry | None:
        start = self.get_metadata(PositionProvider, node).start
        self.references.append(Problem(line=start.line, col=start.column + 1, name=name, message="reference"))
        path = self._config_path(name)
        if path is not None:
            message = _config_problem(self.table.config, path, store=store)
            if message:
                self._report(node, name, message)
            return None
        entry, message = lookup(self.table, name)
        if message:
            self._report(node, name, message)
        return entry

    def visit_Call(self, node: cst.Call) -> bool:
        name = self._qualified(node.func)
        if name is None:
            return True
        self._done.add(id(node.func))
        entry = self._check_name(node.func, name)
        if entry is not None and entry.kind is ApiKind.MODULE:
            self._report(node, name, f"{name} is a module, not callable")
        elif entry is not None and entry.kind is not ApiKind.VALUE and entry.params is not None:
            for blame, message in check_arguments(entry.params, node):
                self._report(blame, name, message)
        return True

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if id(node) in self._done:
            return False
        name = self._qualified(node)
        if name is None:
            return True
        context = self.get_metadata(ExpressionContextProvider, node, None)
        self._check_name(node, name, store=context is ExpressionContext.STORE)
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            name = self._qualified(target.target)
            path = self._config_path(name) if name else None
            leaf = self.table.config.leaves.get(path) if path and self.table.config else None
            if leaf is not None and leaf.choices is not None:
                self._check_choice(node.value, name, leaf.choices)

    def _check_choice(self, value: cst.BaseExpression, name: str, choices: tuple[object, ...]) -> None:
        try:
            literal = ast.literal_eval(self.module.code_for_node(value))
        except (ValueError, SyntaxError, TypeError):
            return
        if literal not in choices:
            self._report(value, name, f"value {literal!r} is not one of {list(choices)!r}")

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            self._check_imported(alias, dotted(alias.name) or "")
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return False
        for alias in node.names:
            self._check_imported(alias, f"{dotted(node.module)}.{dotted(alias.name)}")
        return False

    def _check_imported(self, node: cst.CSTNode, name: str) -> None:
        name = self.table.canonical(name)
        if self.table.covers(name):
            self._check_name(node, name)


def _run(code: str, table: ApiTable) -> _Checker:
    wrapper = MetadataWrapper(cst.parse_module(code))
    checker = _Checker(wrapper.module, table, collect_names(wrapper.module, table))
    wrapper.visit(checker)
    return checker


def api_references(code: str, table: ApiTable) -> list[Problem]:
    """Every reference to the table's namespaces (as records with message "reference")."""
    return _run(code, table).references


def verify_source(code: str, table: ApiTable) -> list[Problem]:
    """Every reference in `code` to the table's namespaces that the real API rejects.

    Checked: calls and attribute reads/writes whose dotted name (after import
    aliases, and through variables bound to an instance of an API class) starts
    with one of `table.roots`: the name exists; keyword names exist; the number
    of positional arguments fits; required arguments are given; CompilerConfig
    writes name an option and literal values are among its choices.
    """
    try:
        checker = _run(code, table)
    except cst.ParserSyntaxError as err:
        return [Problem(line=err.raw_line, col=err.raw_column + 1, name="<source>", message=err.message)]
    return sorted(checker.problems, key=lambda p: (p.line, p.col, p.name))
