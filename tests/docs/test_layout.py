"""docs/architecture.md's folder table is the tree of codegen/: a stage per folder, each with its entry.

The table is what a reader trusts to find a stage; these tests fail when a folder, an ``__init__.py``, its
docstring or ``__all__``, or a module named there goes missing, and when a module lands outside every
folder the table lists (at the root of codegen/, or in a folder nobody wrote down).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
ROW = re.compile(r"^\| `((?:codegen|npudsl)/[\w/]+?(?:/\*)?)` \| [^|]+ \| `(\w+)` \| [^|]+ \| (.+) \|$")


def layout() -> dict[str, tuple[str, list[str]]]:
    """folder -> (entry, modules named in the table; ``*`` for any). A row ``folder/*`` stands for each package
    in ``folder`` (the targets: a folder each, all alike), so adding one does not touch the table."""
    section = DOC.read_text(encoding="utf-8").split("## Folder layout", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        if match := ROW.match(line):
            named = (match.group(2), re.findall(r"`?([\w*]+/?)`?", match.group(3)))
            folder = match.group(1)
            if folder.endswith("/*"):
                parent = ROOT / folder[:-2]
                each = sorted(p for p in parent.iterdir() if (p / "__init__.py").is_file()) if parent.is_dir() else []
                rows |= {p.relative_to(ROOT).as_posix(): named for p in each}
            else:
                rows[folder] = named
    return rows


def modules(folder: Path) -> set[str]:
    """The modules and subpackages of ``folder`` (``name`` and ``name/``), without ``__init__``."""
    files = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
    return files | {f"{p.name}/" for p in folder.iterdir() if (p / "__init__.py").exists()}


def init_tree(folder: Path) -> ast.Module:
    return ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))


def assigned(node: ast.stmt) -> set[str]:
    """The plain names a top-level assignment binds."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return {t.id for t in targets if isinstance(t, ast.Name)}


def exported(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if "__all__" in assigned(node):
            return list(ast.literal_eval(node.value))  # type: ignore[attr-defined]
    return None


def bound(tree: ast.Module) -> set[str]:
    """Names an ``__init__`` binds at its top level (imports, definitions, assignments)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        names |= assigned(node)
    return names


LAYOUT = layout() if DOC.exists() else {}


def test_each_registered_target_is_a_folder_of_the_table() -> None:
    from codegen.targets import NAMES

    assert {f"codegen/targets/{name}" for name in NAMES} <= set(LAYOUT)
    assert all(LAYOUT[f"codegen/targets/{name}"][0] == "TARGET" for name in NAMES)


def test_the_table_names_every_stage() -> None:
    assert {
        "codegen/driver",
        "codegen/index",
        "codegen/frontend",
        "codegen/check",
        "codegen/lower",
        "codegen/rewrite",
        "codegen/targets",
    } <= set(LAYOUT)


@pytest.mark.parametrize("folder", sorted(LAYOUT))
def test_each_folder_has_a_docstring_and_exports_its_entry(folder: str) -> None:
    entry, named = LAYOUT[folder]
    path = ROOT / folder
    assert (path / "__init__.py").is_file(), f"{folder} has no __init__.py"
    tree = init_tree(path)
    assert ast.get_docstring(tree), f"{folder}/__init__.py has no docstring"
    exports = exported(tree)
    assert exports, f"{folder}/__init__.py has no __all__"
    assert entry in exports, f"{folder}: the entry {entry!r} is not in __all__ {exports}"
    held = bound(tree) | {module.rstrip("/") for module in modules(path)}
    unknown = [name for name in exports if name not in held]
    assert not unknown, f"{folder}/__init__.py exports what it neither binds nor holds: {unknown}"


@pytest.mark.parametrize("folder", sorted(LAYOUT))
def test_each_folder_holds_the_modules_the_table_lists(folder: str) -> None:
    _, named = LAYOUT[folder]
    actual = modules(ROOT / folder)
    if named == ["*"]:
        assert actual, f"{folder} is empty"
        return
    assert set(named) == actual, f"{folder}: the table lists {sorted(named)}, the folder holds {sorted(actual)}"


def test_no_module_lives_outside_the_folders_listed() -> None:
    stray = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "codegen").rglob("*.py")
        if p.parent.relative_to(ROOT).as_posix() not in LAYOUT and p != ROOT / "codegen" / "__init__.py"
    )
    assert not stray, f"modules in no folder of docs/architecture.md's table: {stray}"
