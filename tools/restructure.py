"""Move codegen/ into a folder per pipeline stage and the commands into npudsl/cli/ (issue 22), and rewrite every
name of a moved module.

Other branches keep editing the modules that move, so the move is a program rather than a commit: run it
on any checkout of main (``python tools/restructure.py``), review ``git status``, commit. It uses the
standard library only, and ``git mv`` so history follows the files. It is idempotent: a move whose old
path no longer exists is done, and a second run finds nothing to do.

What it rewrites, in every tracked text file outside the transformer's case data: dotted module names
(``import codegen.x``, ``from codegen.x import y``, ``mock.patch("codegen.x.y")``, mypy's module lists),
slash paths (``codegen/x.py``, ``codegen/checks/``), and ``from codegen import x`` statements (``npudsl``
likewise), split by the package each name moves to. It then sorts the imports of the Python files it
changed with ruff (``I001`` only) when ruff is installed, because a new path can change an import's place.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

TARGET_FOLDERS = ("aclgraph", "cuda", "ge", "npugraph_ex", "portable")  # the targets when they became folders

# Old module (or package) -> new one. A package moves with everything under it.
MODULES: dict[str, str] = {
    **{
        f"codegen.{m}": f"codegen.driver.{m}"
        for m in ("api", "run", "discover", "gitignore", "workers", "modules", "pyast", "reading", "triage")
    },
    **{f"codegen.{m}": f"codegen.index.{m}" for m in ("index", "scan")},
    **{f"codegen.{m}": f"codegen.frontend.names.{m}" for m in ("resolve", "name_flow", "bindings")},
    **{
        f"codegen.{m}": f"codegen.frontend.{m}"
        for m in ("collect", "decorator_args", "constants", "signature", "positions", "ir")
    },
    **{f"codegen.{m}": f"codegen.check.{m}" for m in ("validate", "diagnostics")},
    "codegen.checks": "codegen.check.rules",
    **{f"codegen.{m}": f"codegen.lower.{m}" for m in ("lower", "plan", "naming", "hygiene")},
    "codegen.flow": "codegen.lower.flow",
    # The commands: `npudsl/cli.py` becomes the package `npudsl/cli/` (its __init__, so `npudsl.cli:main`, the
    # command's entry point, keeps its name), and the modules only the commands use move into it.
    "npudsl.cli": "npudsl.cli",
    "npudsl.cli_args": "npudsl.cli.args",
    "npudsl.transform_cli": "npudsl.cli.transform",
    "npudsl.check_cli": "npudsl.cli.check",
    **{
        f"npudsl.{m}": f"npudsl.cli.{m}"
        for m in ("sources", "config", "report", "sarif", "noqa", "files", "diffs", "generated_tree", "terminal")
    },
    # A folder per target (its spelling, its backend for npudsl.compile, its traits in __init__): the module of
    # each target becomes the spelling of its folder. Splitting out the traits and the backend is not a move.
    **{f"codegen.targets.{t}": f"codegen.targets.{t}.spelling" for t in TARGET_FOLDERS},
}
FOLDERS = {"codegen.checks", "codegen.flow"}  # the old modules that are packages
PROMOTED = {"npudsl.cli"}  # old modules that become the __init__.py of a package of the same name

# New packages: their __init__.py (written only when absent). Each names its stage, entry and IR, and
# exports its entry module behind __all__ (modules, not functions: `lower.lower` would shadow the
# submodule `lower`, and importing a stage's modules eagerly would make import cycles between stages).
PACKAGES: dict[str, tuple[str, list[str]]] = {
    "codegen/driver": (
        "The driver: find the files of a run, read and parse them once, index them, hand each to a "
        "worker, and collect the results.\n\nEntry: `api` (`analyze`, `transform_with_index`) for one "
        "file, `run.run` for a run. Reads paths; makes `SourceFile`s and `FileResult`s.",
        ["api", "run"],
    ),
    "codegen/index": (
        "The run index: what every file of a run says about the others (stream functions, "
        "submodules, call sites across files).\n\nEntry: `index.build_index`. IR: `index.RunIndex` "
        "(`CalleeInfo`, `CallInfo`).",
        ["index"],
    ),
    "codegen/frontend": (
        "The front end: which decorators are npudsl's (`names/`), and what they say, as frozen IR "
        "with positions (NPD0xx/1xx).\n\nEntry: `collect.collect`. IR: `ir.ModuleIR` of "
        "`StreamFunction`s.",
        ["collect", "ir"],
    ),
    "codegen/frontend/names": (
        "Name resolution: which names in a module are npudsl's decorators, through imports, "
        "aliases and rebindings (NPD110).\n\nEntry: `resolve.resolve`. IR: "
        "`resolve.NpudslNames`.",
        ["resolve"],
    ),
    "codegen/check": (
        "The check stage: the rules of `npudsl check`, one per module under `rules/`, run on a "
        "module's IR and the run index.\n\nEntry: `validate.validate`. IR: `diagnostics.Diagnostic`.",
        ["validate", "diagnostics"],
    ),
    "codegen/lower": (
        "Lowering: a module's IR and the run index become a target-free plan; `flow/` plans the "
        "automatic synchronization of each caller.\n\nEntry: `lower.lower`. IR: `plan.ModulePlan` "
        "(`FunctionPlan`, `CallerPlan`).",
        ["lower", "plan"],
    ),
    "codegen/lower/flow": (
        "The flow planner: where each caller forks to and joins a stream function's stream, "
        "following the data.\n\nEntry: `planner`. IR: the steps of `lower.plan`.",
        ["planner"],
    ),
    **{
        f"codegen/targets/{t}": (
            f"The {t} target: its spelling (`spelling`). Its traits (`TARGET`) and its backend for "
            "npudsl.compile (`backend`) are written by hand: see docs/architecture.md, Adding a target.",
            ["spelling"],
        )
        for t in TARGET_FOLDERS
    },
}

# The transformer's inputs and expected outputs: never rewritten (same list as ruff's extend-exclude).
KEEP = ("tests/golden/*/*", "tests/corpus/*/*", "tests/check/cases/*", "bench/hand_written/*", "tools/restructure.py")
TEXT = (".py", ".md", ".toml", ".cfg", ".ini", ".txt", ".yaml", ".yml", ".json", ".sh")
TEXT_NAMES = ("Makefile",)

DOTTED = re.compile(r"(?<![\w.])(?:codegen|npudsl)(?:\.[A-Za-z_]\w*)+")
SLASHED = re.compile(r"(?<![\w/.])(?:codegen|npudsl)(?:/[A-Za-z_]\w*)+(?:\.py\b|/)?")
FROM_ROOT = re.compile(r"^([ \t]*)from (codegen|npudsl) import (\([^)]*\)|[^\n]*)$", re.MULTILINE)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def source_path(root: Path, module: str) -> Path | None:
    """The file or folder that holds the old ``module`` while it has not moved, or None."""
    base = root.joinpath(*module.split("."))
    path = base if module in FOLDERS else base.with_suffix(".py")
    return path if path.exists() else None


def pending(root: Path) -> dict[str, str]:
    """The moves not done yet: their old file or folder still exists."""
    return {old: new for old, new in MODULES.items() if source_path(root, old) is not None}


def move(root: Path, old: str, new: str) -> None:
    src = source_path(root, old)
    assert src is not None
    dst = root.joinpath(*new.split("."))
    if old in PROMOTED:
        dst = dst / "__init__.py"
    elif src.suffix == ".py":
        dst = dst.with_suffix(".py")
    if dst.is_dir() and all(p.name == "__pycache__" for p in dst.iterdir()):
        shutil.rmtree(dst)  # left by an earlier run that was undone: build output only
    dst.parent.mkdir(parents=True, exist_ok=True)
    git(root, "mv", str(src.relative_to(root)), str(dst.relative_to(root)))
    if src.is_dir():  # left behind: build output only (__pycache__), never tracked
        shutil.rmtree(src)


def write_packages(root: Path) -> list[Path]:
    made = []
    for folder, (doc, exports) in PACKAGES.items():
        init = root / folder / "__init__.py"
        if init.exists() or not init.parent.is_dir():
            continue
        init.write_text(init_text(doc, exports))
        git(root, "add", str(init.relative_to(root)))
        made.append(init)
    return made


def init_text(doc: str, exports: list[str]) -> str:
    paragraphs = [textwrap.fill(p, width=110) for p in doc.split("\n\n")]
    names = ", ".join(f'"{name}"' for name in exports)
    return '"""' + "\n\n".join(paragraphs) + '\n"""\n\n' + f"__all__ = [{names}]\n"


class Renamer:
    """Maps names of old modules to new ones; ``folders`` are the old modules that were packages."""

    def __init__(self, moves: dict[str, str], folders: set[str]) -> None:
        self.moves, self.folders = moves, folders

    def module(self, parts: list[str], is_file: bool | None) -> list[str] | None:
        """``parts`` renamed by the longest moved prefix; ``is_file``: a path ending in .py (None: dotted)."""
        for end in range(len(parts), 1, -1):
            old = ".".join(parts[:end])
            if old not in self.moves:
                continue
            if is_file is not None and not self.names_path(old, end == len(parts) and is_file):
                return None
            return self.moves[old].split(".") + parts[end:]
        return None

    def names_path(self, old: str, whole_file: bool) -> bool:
        """Whether a slash path through ``old`` (``whole_file``: ending at ``old`` plus .py) is in the old tree:
        ``codegen/checks/base.py`` and ``codegen/lower.py`` are, ``codegen/lower`` and ``codegen/flow.py`` are not."""
        return not whole_file if old in self.folders else whole_file

    def dotted(self, match: re.Match[str]) -> str:
        parts = self.module(match.group(0).split("."), None)
        return match.group(0) if parts is None else ".".join(parts)

    def slashed(self, match: re.Match[str]) -> str:
        text = match.group(0)
        tail = ".py" if text.endswith(".py") else "/" if text.endswith("/") else ""
        old = text[: len(text) - len(tail)].split("/")
        parts = self.module(old, tail == ".py")
        if parts is not None and tail == ".py" and ".".join(old) in PROMOTED:
            tail = "/__init__.py"
        return text if parts is None else "/".join(parts) + tail

    def from_root(self, match: re.Match[str]) -> str:
        indent, top = match.group(1), match.group(2)
        names, _, comment = match.group(3).partition("#")
        names = names.strip().strip("()").replace("\n", " ")
        groups: dict[str, list[str]] = {}
        for item in filter(None, (name.strip() for name in names.split(","))):
            old = f"{top}.{item.split()[0]}"
            groups.setdefault(self.moves.get(old, old).rpartition(".")[0], []).append(item)
        if list(groups) == [top]:
            return match.group(0)
        lines = [f"{indent}from {package} import {', '.join(items)}" for package, items in sorted(groups.items())]
        return "\n".join(lines) + (f"  # {comment.strip()}" if comment else "")

    def text(self, text: str) -> str:
        text = SLASHED.sub(self.slashed, text)
        text = DOTTED.sub(self.dotted, text)
        return FROM_ROOT.sub(self.from_root, text)


def tracked_text_files(root: Path) -> list[Path]:
    files = []
    for name in git(root, "ls-files", "-z").split("\0"):
        if not name or any(fnmatch.fnmatch(name, pattern) for pattern in KEEP):
            continue
        if name.endswith(TEXT) or Path(name).name in TEXT_NAMES:
            files.append(root / name)
    return files


def rewrite(root: Path, renamer: Renamer) -> list[Path]:
    changed = []
    for path in tracked_text_files(root):
        if not path.is_file():
            continue
        old = path.read_text(encoding="utf-8")
        new = renamer.text(old)
        if new != old:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def sort_imports(root: Path, files: list[Path]) -> None:
    local = root / ".venv" / "bin" / "ruff"
    ruff = str(local) if local.exists() else shutil.which("ruff")
    python = [str(f) for f in files if f.suffix == ".py"]
    if ruff is None:
        print("ruff not found: run `ruff check --select I001 --fix .` to sort the rewritten imports", file=sys.stderr)
    elif python:
        subprocess.run(
            [ruff, "check", "--quiet", "--select", "I001", "--fix", "--exit-zero", *python], cwd=root, check=True
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    root = parser.parse_args(argv).root.resolve()
    moves = pending(root)
    if not moves:
        print("restructure: nothing to do (every move is done)")
        return 0
    for old, new in moves.items():
        move(root, old, new)
    made = write_packages(root)
    changed = rewrite(root, Renamer(moves, FOLDERS))
    sort_imports(root, changed)
    print(f"restructure: moved {len(moves)} modules, wrote {len(made)} __init__.py, rewrote {len(changed)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
