"""``npudsl check``: every diagnostic of a run, as text, JSON lines, SARIF or GitHub annotations; nothing is written.

Exit codes: 0 no errors (warnings allowed), 1 errors, 2 usage or internal error.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import TYPE_CHECKING

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.driver import pyast
from codegen.driver.run import FileResult, SourceFile, heap_frozen, map_files, run_index, untouched
from codegen.targets import TARGETS
from npudsl.cli.args import (
    EXIT_DIAGNOSTICS,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_filters,
    add_jobs,
    command_parser,
    existing_paths,
)
from npudsl.cli.config import Config, load_config
from npudsl.cli.noqa import Rules
from npudsl.cli.report import count, render_github, render_json, render_text
from npudsl.cli.sarif import sarif_log
from npudsl.cli.sources import gather, jobs_for, rules_for, target_for
from npudsl.cli.terminal import ProgressLine, Style, wants_color
from npudsl.devices import DEFAULT_DEVICE, DEVICES, Device, DeviceError, custom_device, get_device

if TYPE_CHECKING:
    from codegen.check.rules.pipeline import FileReport
    from codegen.index.index import RunIndex

__all__ = ["build_parser", "run_check"]

_EXAMPLES = """  npudsl check src/                            text diagnostics, one a line
  npudsl check src/ --device atlas-a2-910b3    core limits against that device
  npudsl check src/ --cores 20,40              ... or against these core counts
  npudsl check src/ --format sarif > npudsl.cli.sarif   for code-scanning services
  npudsl check src/ --format github            annotations in a GitHub Actions job"""

FORMATS = ("text", "json", "sarif", "github")


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "check",
        description="Report multi-stream mistakes (unknown events, cycles, core "
        "limits, unsynchronized streams...) without writing anything: what transform would "
        "report, for the chosen device.",
        examples=_EXAMPLES,
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="files and folders (every .py file below); '-' reads standard input"
    )
    device = parser.add_mutually_exclusive_group()
    device.add_argument(
        "--device",
        metavar="NAME",
        help=f"a device profile: {', '.join(sorted(DEVICES))} "
        f"(default: [tool.npudsl] device, else {DEFAULT_DEVICE.name}); e.g. --device atlas-a3",
    )
    device.add_argument("--cores", metavar="AIC,AIV", help="cube and vector core counts; e.g. --cores 24,48")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), json (one object a line), sarif (SARIF 2.1.0), github "
        "(::error annotations); e.g. --format sarif",
    )
    parser.add_argument(
        "--target",
        "-t",
        choices=sorted(TARGETS),
        metavar="T",
        help="the target whose own diagnostics to include (default: [tool.npudsl] target, else "
        "aclgraph); e.g. --target ge",
    )
    add_jobs(parser)
    add_filters(parser)
    parser.add_argument(
        "--stdin-filename", metavar="PATH", help="with '-': the path to report; e.g. --stdin-filename pkg/model.py"
    )
    return parser


def _device(args: argparse.Namespace, config: Config) -> Device:
    try:
        if args.cores or (config.cores and not args.device):
            return custom_device(args.cores or config.cores or "")
        name = args.device or config.device
        return get_device(name) if name else DEFAULT_DEVICE
    except DeviceError as exc:
        where = f"{config.path}: " if not (args.cores or args.device) else ""
        raise UsageError(f"{where}{exc}") from None


def _check_one(file: SourceFile, *, index: RunIndex, target: str, device: Device) -> FileReport:
    from codegen.check.rules.pipeline import check_file  # imported before the workers fork (see run_check)

    return check_file(file, index, target=target, device=device)


def _as_result(file: SourceFile, report: FileReport | None) -> FileResult:
    """One shape for every file: a checked one, and one that needed no check (``report`` None)."""
    if report is None:
        return untouched(file)
    return FileResult(file=file, code=None, diagnostics=report.diagnostics, internal_error=report.internal_error)


def run_check(args: argparse.Namespace) -> int:
    paths = existing_paths(args.paths)
    config = load_config(paths)
    device, target, rules = _device(args, config), target_for(args, config), rules_for(args, config)
    files = gather(args, config)
    progress = ProgressLine(sys.stderr) if sys.stderr.isatty() else None
    try:
        with pyast.shared_trees(), heap_frozen() as freeze:  # as ``run``: no collector passes over the index
            index = run_index(files, progress)
            if index is not None:
                import codegen.check.rules.pipeline  # noqa: F401  (libcst: only when some file names npudsl)
            freeze()
            task = functools.partial(_check_one, target=target, device=device)
            reports = map_files(
                task, files, index=index, jobs=jobs_for(args, config), phase="checking", progress=progress
            )
    finally:
        if progress is not None:
            progress.close()
    results = [_as_result(file, report) for file, report in zip(files, reports)]
    diagnostics, silenced = _filter(results, rules)
    _print(diagnostics, args.format)
    return _finish(results, diagnostics, device, silenced)


def _filter(results: list[FileResult], rules: Rules) -> tuple[list[Diagnostic], int]:
    kept: list[Diagnostic] = []
    silenced = 0
    for result in results:
        shown, quiet = rules.keep(result.diagnostics, result.file.source)
        kept += shown
        silenced += quiet
    return kept, silenced


def _print(diagnostics: list[Diagnostic], form: str) -> None:
    if form == "sarif":
        sys.stdout.write(sarif_log(diagnostics))
        return
    style = Style(wants_color(sys.stdout))
    render = {"json": render_json, "github": render_github}.get(form, lambda d: render_text(d, style))
    for diagnostic in diagnostics:
        print(render(diagnostic))


def _finish(results: list[FileResult], diagnostics: list[Diagnostic], device: Device, silenced: int) -> int:
    internal = [r for r in results if r.internal_error]
    for report in internal:
        print(
            f"{report.file.path}: internal error in npudsl (please report):\n{report.internal_error}", file=sys.stderr
        )
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    sys.stdout.flush()  # the diagnostics (stdout) before the summary (stderr), also through one pipe
    quiet = f", {silenced} silenced" if silenced else ""
    print(
        f"npudsl check: {count(len(results), 'file')}, {count(errors, 'error')}, "
        f"{count(len(diagnostics) - errors, 'warning')}{quiet} (device {device.describe()})",
        file=sys.stderr,
    )
    if internal:
        return EXIT_USAGE
    return EXIT_DIAGNOSTICS if errors else EXIT_OK
