"""tools/restructure.py: what it renames, and that a second run on a restructured tree does nothing.

The lead re-runs the script on main after other branches merge, so its rewriting rules are tested on
their own (each spelling of a module name, before and after) and end to end on a small git repository.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "restructure.py"

spec = importlib.util.spec_from_file_location("restructure", SCRIPT)
assert spec is not None and spec.loader is not None
restructure = importlib.util.module_from_spec(spec)
spec.loader.exec_module(restructure)
RENAMER = restructure.Renamer(restructure.MODULES, restructure.FOLDERS)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("from codegen.ir import ModuleIR", "from codegen.frontend.ir import ModuleIR"),
        ("import codegen.run", "import codegen.driver.run"),
        ('mock.patch("codegen.run._transform_one")', 'mock.patch("codegen.driver.run._transform_one")'),
        ("from codegen.checks.base import Rule", "from codegen.check.rules.base import Rule"),
        ("from codegen.index import RunIndex", "from codegen.index.index import RunIndex"),
        ('"codegen.flow.analyze"', '"codegen.lower.flow.analyze"'),
        ("see codegen/lower.py and codegen/flow/ge.py", "see codegen/lower/lower.py and codegen/lower/flow/ge.py"),
        ("`codegen/checks/*.py`", "`codegen/check/rules/*.py`"),
        (
            "from codegen import naming, scan, targets",
            "from codegen import targets\nfrom codegen.index import scan\nfrom codegen.lower import naming",
        ),
        (
            "    from codegen import (\n        pyast,\n        bindings as b,\n    )",
            "    from codegen.driver import pyast\n    from codegen.frontend.names import bindings as b",
        ),
        ("from codegen import pyast  # noqa: E402", "from codegen.driver import pyast  # noqa: E402"),
        ("from npudsl import codes, report", "from npudsl import codes\nfrom npudsl.cli import report"),
        ("from npudsl.cli_args import EXIT_OK", "from npudsl.cli.args import EXIT_OK"),
        ('"npudsl.transform_cli"', '"npudsl.cli.transform"'),
        ("npudsl/check_cli.py", "npudsl/cli/check.py"),
        ("npudsl/cli.py", "npudsl/cli/__init__.py"),
        ("from codegen.targets.ge import Ge", "from codegen.targets.ge.spelling import Ge"),
        (
            "from codegen.targets.aclgraph import TorchairSpelling",
            "from codegen.targets.aclgraph.spelling import TorchairSpelling",
        ),
        ("codegen/targets/ge.py", "codegen/targets/ge/spelling.py"),
    ],
)
def test_each_spelling_of_a_moved_module_is_renamed(before: str, after: str) -> None:
    assert RENAMER.text(before) == after


@pytest.mark.parametrize(
    "kept",
    [
        "from codegen.targets.base import Spelling",
        "from codegen import targets",
        "x.codegen.run",
        "codegen/lower",
        "codegen/flow.py",
        "codegen/targets/ge/backend.py",
        "codegen/targets/ge/",
        "from codegen.rewrite.splice import rewrite_source",
        "npudsl.cli:main",
        "from npudsl import cli",
        "from npudsl import on_stream, after",
        "npudsl/runtime/eager.py",
    ],
)
def test_what_names_no_moved_module_is_kept(kept: str) -> None:
    assert RENAMER.text(kept) == kept


@pytest.mark.parametrize("folder", sorted(restructure.PACKAGES))
def test_each_new_init_has_a_docstring_and_all(folder: str) -> None:
    doc, exports = restructure.PACKAGES[folder]
    tree = ast.parse(restructure.init_text(doc, exports))
    assert ast.get_docstring(tree) and max(map(len, restructure.init_text(doc, exports).splitlines())) <= 120
    assert ast.literal_eval(tree.body[-1].value) == exports  # type: ignore[attr-defined]


def test_this_tree_is_restructured() -> None:
    assert restructure.pending(ROOT) == {}


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True, capture_output=True
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_run_moves_and_rewrites_and_a_second_run_does_nothing(tmp_path: Path) -> None:
    files = {
        "codegen/__init__.py": "",
        "codegen/index.py": "X = 1\n",
        "codegen/lower.py": "Y = 2\n",
        "codegen/flow/ge.py": "from codegen.index import X\n",
        "codegen/checks/__init__.py": "",
        "user.py": "from codegen import lower\nimport codegen.flow.ge\n",
        "notes.md": "see `codegen/index.py`\n",
        "tests/golden/case/in.py": "from codegen.index import X\n",
        "npudsl/__init__.py": "",
        "npudsl/cli.py": "from npudsl import report\n",
        "npudsl/report.py": "R = 3\n",
        "codegen/targets/__init__.py": "from codegen.targets.ge import Ge\n",
        "codegen/targets/ge.py": "class Ge: ...\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "old layout")
    assert restructure.main(["--root", str(tmp_path)]) == 0
    assert (tmp_path / "codegen/index/index.py").read_text() == "X = 1\n"
    assert (tmp_path / "codegen/lower/flow/ge.py").read_text() == "from codegen.index.index import X\n"
    assert (tmp_path / "user.py").read_text() == "from codegen.lower import lower\nimport codegen.lower.flow.ge\n"
    assert (tmp_path / "notes.md").read_text() == "see `codegen/index/index.py`\n"
    assert (tmp_path / "npudsl/cli/__init__.py").read_text() == "from npudsl.cli import report\n"
    assert (tmp_path / "npudsl/cli/report.py").read_text() == "R = 3\n"
    assert (tmp_path / "codegen/targets/ge/spelling.py").read_text() == "class Ge: ...\n"
    assert (tmp_path / "codegen/targets/__init__.py").read_text() == "from codegen.targets.ge.spelling import Ge\n"
    assert ast.get_docstring(ast.parse((tmp_path / "codegen/targets/ge/__init__.py").read_text()))
    assert (tmp_path / "tests/golden/case/in.py").read_text() == files["tests/golden/case/in.py"]
    assert not (tmp_path / "codegen/flow").exists() and (tmp_path / "codegen/check/rules/__init__.py").exists()
    assert ast.get_docstring(ast.parse((tmp_path / "codegen/lower/__init__.py").read_text()))
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "new layout")
    assert restructure.main(["--root", str(tmp_path)]) == 0
    status = subprocess.run(["git", "status", "--porcelain"], cwd=tmp_path, capture_output=True, text=True)
    assert status.stdout == ""
