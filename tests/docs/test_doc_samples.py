"""Every code sample of README.md and docs/*.md is run, or compared with the tool's real output.

How each sample is tested is written beside it (see markdown_samples); a sample that drifts from
what the tool does fails here, named by page and line.
"""

from __future__ import annotations

import ast
import importlib
import re
import shlex
import textwrap
from pathlib import Path

import pytest

from markdown_samples import REPO, Sample, all_samples, samples_of
from npudsl.cli import COMMANDS
from sample_runs import diagnostic_codes, missing_piece, run_command, workdir_for

SAMPLES = all_samples()
_DIAGNOSTIC = re.compile(r"^\S+\.py:\d+:\d+: NPD\d{3} ", re.MULTILINE)
_NEEDS_TORCH = ("schedule", "suggest")


def _of(*kinds: str) -> list[Sample]:
    return [s for s in SAMPLES if s.kind in kinds]


def _workdir(sample: Sample, tmp_path: Path) -> Path:
    if sample.argument.split()[1:2] and sample.argument.split()[1] in _NEEDS_TORCH:
        pytest.importorskip("torch")
    return workdir_for(samples_of(sample.page), tmp_path)


@pytest.mark.parametrize("sample", _of("output"), ids=lambda s: s.name)
def test_output_samples_are_what_the_command_prints(sample: Sample, tmp_path: Path) -> None:
    assert run_command(sample.argument, _workdir(sample, tmp_path)) == sample.text


@pytest.mark.parametrize("sample", _of("excerpt"), ids=lambda s: s.name)
def test_excerpts_are_pieces_of_what_the_command_prints(sample: Sample, tmp_path: Path) -> None:
    output = run_command(sample.argument, _workdir(sample, tmp_path))
    missing = missing_piece(sample.text, output)
    assert missing is None, f"not in `{sample.argument}`:\n{missing}"


@pytest.mark.parametrize("sample", _of("check"), ids=lambda s: s.name)
def test_check_samples_report_the_codes_their_comments_name(sample: Sample, tmp_path: Path) -> None:
    (tmp_path / "sample.py").write_text(sample.text, encoding="utf-8")
    claimed = {
        n: set(re.findall(r"NPD\d{3}", line.partition("#")[2]))
        for n, line in enumerate(sample.text.splitlines(), 1)
        if re.search(r"#.*NPD\d{3}", line)
    }
    assert diagnostic_codes(run_command("npudsl check sample.py", tmp_path), "sample.py") == claimed


@pytest.mark.parametrize("sample", [s for s in _of("plain", "check") if s.lang == "python"], ids=lambda s: s.name)
def test_python_samples_parse(sample: Sample) -> None:
    ast.parse(textwrap.dedent(sample.text))


def _commands(sample: Sample) -> list[list[str]]:
    lines = [re.sub(r"\s+#.*$", "", line).split("|")[0].strip() for line in sample.text.splitlines()]
    return [shlex.split(line) for line in lines if line.startswith(("npudsl ", "make "))]


@pytest.mark.parametrize("sample", [s for s in _of("plain") if s.lang == "sh"], ids=lambda s: s.name)
def test_shell_samples_are_commands_the_tool_accepts(sample: Sample) -> None:
    targets = set(re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(), re.MULTILINE))
    for words in _commands(sample):
        if words[0] == "make":
            assert set(words[1:]) <= targets, words
            continue
        module = importlib.import_module(COMMANDS[words[1]][0])
        try:
            module.build_parser().parse_intermixed_args(words[2:])
        except SystemExit:
            pytest.fail(f"{sample.name}: `{' '.join(words)}` is not a valid command")


@pytest.mark.parametrize("sample", _of("plain", "file", "check"), ids=lambda s: s.name)
def test_no_diagnostic_is_shown_that_no_test_compares(sample: Sample) -> None:
    assert not _DIAGNOSTIC.search(sample.text), f"{sample.name}: mark it <!-- sample: output of COMMAND -->"


def test_every_sample_is_seen_and_every_skip_has_a_reason() -> None:
    assert len(SAMPLES) >= 40
    assert all(s.argument for s in _of("skip"))
    assert {s.page.name for s in _of("excerpt")} >= {"README.md", "targets.md"}


def test_not_utf8_sample(tmp_path: Path) -> None:
    """docs/check.md's NPD002 sample: the 6th byte of line 5 does not decode."""
    (sample,) = [s for s in SAMPLES if s.kind == "skip" and "NPD002" in s.text]
    (tmp_path / "model.py").write_bytes(b"from npudsl import on_stream\n\n\n\nx = '\xff'\n")
    assert run_command("npudsl check model.py", tmp_path).splitlines()[0] == sample.text.strip()


def test_cli_reference_lists_every_command_in_its_synopsis_and_a_section() -> None:
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    synopsis = samples_of(REPO / "docs" / "cli.md")[0].text
    for command in COMMANDS:
        assert f"npudsl {command} " in synopsis, command
        assert f"## `npudsl {command}`" in text, command


def test_readme_says_how_long_each_of_its_two_commands_takes() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("How long they take here") : text.index("## Using it")]
    for command in ("make demo", "make test"):
        assert re.search(rf"`{command}` (took|adds) [^;]*\d+ (s|min)\b", section), command
