"""What users of ruff, black or mypy expect: --version, help, instant usage errors, stdin, colour, summaries."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

import npudsl as package
from cli_util import REPO, npudsl, python
from npudsl.cli import COMMANDS, main

SEED = REPO / "examples" / "seed000.py"
WARNS = REPO / "tests" / "check" / "cases" / "npd505_unused_record_bad.py"

_NO_TORCH = """
import json, sys
from npudsl.cli import main
for argv in json.loads(sys.argv[1]):
    code = main(argv)
    print("TORCH" if "torch" in sys.modules else "NO-TORCH", code, file=sys.stderr)
"""
_TORCH_FREE = [
    ["--help"],
    ["transform", "--help"],
    ["check", "-h"],
    ["schedule", "-h"],
    ["transform"],
    ["frobnicate"],
    ["schedule", "/no/such/model.py"],
    ["schedule", "-o", "x.png", str(SEED)],
    ["schedule", str(SEED), str(SEED)],
    ["transform", str(SEED), "--jobs", "0"],
    ["check", str(SEED), "--jobs", "-1"],
    ["transform", str(SEED), "--check"],
    ["check", str(REPO / "examples")],
]


def test_version_is_one_fact() -> None:
    from importlib.metadata import version

    result = npudsl("--version")
    assert result.returncode == 0 and result.stdout == f"npudsl {package.__version__}\n"
    assert version("npudsl") == package.__version__
    assert (REPO / "npudsl" / "py.typed").is_file()


def test_help_usage_errors_transform_and_check_never_import_torch() -> None:
    result = python("-c", _NO_TORCH, json.dumps(_TORCH_FREE))
    verdicts = [line for line in result.stderr.splitlines() if line.startswith(("TORCH", "NO-TORCH"))]
    assert verdicts == ["NO-TORCH 0"] * 4 + ["NO-TORCH 2"] * 7 + ["NO-TORCH 1", "NO-TORCH 0"], result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_flag_has_help_and_every_command_lists_examples_and_exit_codes(command: str) -> None:
    result = npudsl(command, "--help")
    assert result.returncode == 0
    assert "examples:" in result.stdout and "exit codes:" in result.stdout and "130" in result.stdout
    module = __import__(COMMANDS[command][0], fromlist=["build_parser"])
    for action in module.build_parser()._actions:
        assert action.help, f"{command} {action.option_strings or action.dest} has no help"
        if action.option_strings and action.nargs != 0 and action.dest != "help":
            assert "e.g." in action.help, f"{command} {action.option_strings}: no example"


@pytest.mark.parametrize(
    "argv", [["transform", "--jobs", "0", "X"], ["check", "X", "--jobs", "0"], ["transform", "X", "--select", "E501"]]
)
def test_bad_option_values_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([a.replace("X", str(SEED)) for a in argv]) == 2
    assert "error:" in capsys.readouterr().err


def test_schedule_missing_file_is_a_message_and_exit_2() -> None:
    result = npudsl("schedule", "-o", "x.svg", "/no/such/model.py")
    assert result.returncode == 2
    assert result.stderr == "npudsl: error: no such file or directory: /no/such/model.py\n"


def test_stdin_to_stdout() -> None:
    result = npudsl("transform", "-", stdin=SEED.read_text(encoding="utf-8"))
    assert result.returncode == 0 and "torchair.scope.npu_stream_switch" in result.stdout


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


def test_stdin_options(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _stdin(monkeypatch, SEED.read_text(encoding="utf-8"))
    assert main(["transform", "-", "--stdin-filename", "pkg/seed000.py", "--target", "portable"]) == 0
    assert '"seed000.' in capsys.readouterr().out  # tags are named after the module the file name gives
    assert main(["transform", "-", "--in-place"]) == 2
    _stdin(monkeypatch, WARNS.read_text(encoding="utf-8"))
    assert main(["check", "-"]) == 0
    assert capsys.readouterr().out.startswith("<stdin>:11:6: NPD505")


def test_check_flag_names_the_files_that_would_change(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("x = 1\n")
    (tmp_path / "seed.py").write_text(SEED.read_text(encoding="utf-8"))
    result = npudsl("transform", str(tmp_path), "--check")
    assert result.returncode == 1
    assert result.stdout == f"would change: {tmp_path / 'seed.py'}\n"


def test_summaries_are_grammatical(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["transform", str(WARNS), "--check"]) == 1
    assert (
        capsys.readouterr().err.splitlines()[-1]
        == "npudsl: 1 file, 1 would change, 0 with errors, 1 warning (target aclgraph)"
    )
    assert main(["check", str(WARNS), str(SEED)]) == 0
    assert capsys.readouterr().err.splitlines()[-1].startswith("npudsl check: 2 files, 0 errors, 1 warning (")


def test_text_diagnostics_say_error_or_warning(capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", str(WARNS), str(REPO / "tests" / "check" / "cases" / "npd203_cycle_bad.py")])
    lines = capsys.readouterr().out.splitlines()
    assert {line.split()[2] for line in lines} == {"error:", "warning:"}


def _on_a_terminal(*args: str, env: dict[str, str]) -> str:
    leader, follower = pty.openpty()
    full = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm", **env}
    full.pop("NO_COLOR", None) if "NO_COLOR" not in env else None
    process = subprocess.Popen(
        [sys.executable, "-m", "npudsl", *args], stdout=follower, stderr=follower, stdin=subprocess.DEVNULL, env=full
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(60)
    os.close(leader)
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_only_and_never_with_no_color(capsys: pytest.CaptureFixture[str]) -> None:
    assert "\033[" in _on_a_terminal("check", str(WARNS), env={})
    assert "\033[" not in _on_a_terminal("check", str(WARNS), env={"NO_COLOR": "1"})
    main(["check", str(WARNS)])
    assert "\033[" not in capsys.readouterr().out  # not a terminal


def test_json_format_still_one_object_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", str(WARNS), "--format", "json"])
    assert json.loads(capsys.readouterr().out)["code"] == "NPD505"
