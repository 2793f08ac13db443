"""``[tool.npudsl]`` found like ruff finds its configuration; which files a folder walk reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_util import REPO
from codegen.driver.discover import Excludes, discover
from npudsl.cli import main
from npudsl.cli.config import ConfigError, find_config, load_config

SEED = (REPO / "examples" / "seed000.py").read_text(encoding="utf-8")
CORE_SPLIT = (REPO / "tests" / "check" / "cases" / "npd302_core_sum_ok.py").read_text(encoding="utf-8")


def _project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.npudsl]\n{table}\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    return tmp_path / "src" / "pkg"


def test_the_nearest_pyproject_with_a_table_wins(tmp_path: Path) -> None:
    package = _project(tmp_path, 'target = "ge"')
    (tmp_path / "src" / "pyproject.toml").write_text("[project]\nname = 'inner, without a table'\n")
    found = find_config([str(package)])
    assert found is not None and found[0] == str(tmp_path / "pyproject.toml")
    assert load_config([str(package / "m.py")]).target == "ge"
    assert load_config([str(tmp_path.parent)]).path is None or load_config([str(tmp_path.parent)]).path != found[0]


def test_flags_win_over_the_configuration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = _project(tmp_path, 'target = "ge"\ncores = [12, 32]')
    (package / "split.py").write_text(CORE_SPLIT)
    assert main(["transform", str(package / "split.py"), "--check", "--cores", "1,1"]) == 2  # not a transform flag
    capsys.readouterr()
    assert main(["check", str(package)]) == 1  # 12/32 cores from the configuration
    assert "12 cube / 32 vector" in capsys.readouterr().err
    assert main(["check", str(package), "--device", "atlas-a2"]) == 0
    assert main(["transform", str(package / "split.py")]) == 0
    assert "target ge" in capsys.readouterr().err
    assert main(["transform", str(package / "split.py"), "--target", "cuda"]) == 0
    assert "target cuda" in capsys.readouterr().err


@pytest.mark.parametrize(
    "table,message",
    [
        ('colour = "red"', "has no key 'colour'"),
        ("jobs = 0", "jobs must be"),
        ('select = ["E501"]', "'E501' is not a code"),
        ('target = "tpu"', "unknown target 'tpu'"),
        ('device = "x"\ncores = "1,1"', "both device and cores"),
    ],
)
def test_a_bad_table_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, message: str
) -> None:
    package = _project(tmp_path, table)
    (package / "m.py").write_text("x = 1\n")
    assert main(["check", str(package)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(tmp_path / "pyproject.toml") in err


def test_broken_toml_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.npudsl\n")
    with pytest.raises(ConfigError, match="pyproject.toml: cannot read it as TOML"):
        load_config([str(tmp_path)])


def test_exclude_select_and_ignore_from_the_configuration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = _project(tmp_path, 'exclude = ["legacy"]\nignore = ["NPD505"]')
    warns = (REPO / "tests" / "check" / "cases" / "npd505_unused_record_bad.py").read_text(encoding="utf-8")
    (package / "legacy").mkdir()
    (package / "legacy" / "old.py").write_text("import npudsl\ndef broken(:\n")
    (package / "warns.py").write_text(warns)
    assert main(["check", str(package)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "1 file, 0 errors, 0 warnings, 1 silenced" in err
    assert main(["check", str(package), "--ignore", "NPD9", "--exclude", "nothing"]) == 1
    out, _ = capsys.readouterr()
    assert "NPD505" in out and "NPD001" in out


def _found(*roots: Path, excludes: Excludes = Excludes()) -> list[str]:
    return [os.path.relpath(path, roots[0]) for path, _ in discover([str(r) for r in roots], excludes=excludes)]


def test_walks_skip_gitignored_virtualenv_build_and_hidden_folders(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n*_pb2.py\n/top_only.py\n!keep_pb2.py\n")
    files = [
        "a.py",
        "generated/g.py",
        "x_pb2.py",
        "keep_pb2.py",
        "top_only.py",
        "sub/top_only.py",
        "env1/lib/v.py",
        "build/b.py",
        "dist/d.py",
        ".hidden/h.py",
        "node_modules/n.py",
        "pkg.egg-info/e.py",
        "sub/s.py",
    ]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "env1" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "sub" / ".gitignore").write_text("s.py\n")
    assert _found(tmp_path) == ["a.py", "keep_pb2.py", "sub/top_only.py"]
    assert _found(tmp_path / "sub") == ["top_only.py"]  # the parent's .gitignore applies below it
    assert _found(tmp_path / "generated" / "g.py") == ["."]  # a file given by name is always read
    assert _found(tmp_path, excludes=Excludes(patterns=("sub",), base=str(tmp_path))) == ["a.py", "keep_pb2.py"]
