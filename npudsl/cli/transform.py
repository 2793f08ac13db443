"""``npudsl transform``: rewrite the decorators into explicit stream code (CONTRACT section 4)."""

from __future__ import annotations

import argparse
import sys

from codegen.driver.run import FileResult, run
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
from npudsl.cli.config import load_config
from npudsl.cli.destinations import plan_outputs, write_all
from npudsl.cli.diffs import unified_diff
from npudsl.cli.generated_tree import stale_outputs
from npudsl.cli.noqa import Rules
from npudsl.cli.report import count, render_text, shown_path
from npudsl.cli.sources import STDIN, gather, jobs_for, rules_for, target_for
from npudsl.cli.terminal import ProgressLine, Style, wants_color

__all__ = ["build_parser", "run_transform"]

_EXAMPLES = """  npudsl transform model.py                    print the aclgraph code of one file
  npudsl transform src/ -o out/ --target ge    write every file under out/, same layout
  npudsl transform src/ --in-place             rewrite the files (atomically)
  npudsl transform src/ --diff | git apply     a patch that git apply and patch -p1 accept
  npudsl transform src/ --check                exit 1 and name the files that would change
  npudsl transform src/ --check -o out/        exit 1 and name the files under out/ that are out of date
  cat model.py | npudsl transform -            standard input to standard output"""


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "transform",
        description="Rewrite npudsl decorators into explicit stream, event and "
        "core-limit calls for a target. All PATHs are one run: a class decorated in one file "
        "is known at its call sites in another. A file with an error is never written.",
        examples=_EXAMPLES,
        exit_extra=" (or --check found files that would change)",
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="files and folders (every .py file below); '-' reads standard input"
    )
    parser.add_argument(
        "--target",
        "-t",
        choices=sorted(TARGETS),
        metavar="T",
        help=f"what the decorators become: {', '.join(sorted(TARGETS))} (default: [tool.npudsl] "
        "target, else aclgraph); e.g. --target ge",
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write every result under the folder OUT, at its path relative to its PATH; e.g. -o out/",
    )
    out.add_argument("--in-place", "-i", action="store_true", help="rewrite the files that change, atomically")
    out.add_argument("--diff", action="store_true", help="print a unified diff (paths relative to here) instead")
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; name the files that would change, exit 1 "
        "if any; with -o OUT: the files under OUT that -o would change (generated code out of date)",
    )
    add_jobs(parser)
    add_filters(parser)
    parser.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="with '-': the path to report and to name the module by; e.g. --stdin-filename pkg/m.py",
    )
    return parser


def _mode(args: argparse.Namespace) -> str:
    if args.check and (args.in_place or args.diff):
        raise UsageError(
            f"--check writes nothing: it cannot go with {'--in-place' if args.in_place else '--diff'} "
            "(hint: --check alone, or --check -o OUT to compare with generated code under OUT)"
        )
    if args.check and args.output:
        return "check_output"
    for mode in ("check", "output", "in_place", "diff"):
        if getattr(args, mode):
            return mode
    return "stdout"


def run_transform(args: argparse.Namespace) -> int:
    paths = existing_paths(args.paths)
    if paths == [STDIN] and (args.output or args.in_place):
        raise UsageError("'-' writes its result to standard output; -o and --in-place need files")
    config = load_config(paths)
    target, rules = target_for(args, config), rules_for(args, config)
    files, mode = gather(args, config), _mode(args)
    destinations = plan_outputs(files, args.output, writing=mode == "output") if args.output else {}
    progress = ProgressLine(sys.stderr) if sys.stderr.isatty() else None
    try:
        results = run(files, target=target, jobs=jobs_for(args, config), progress=progress)
    finally:
        if progress is not None:
            progress.close()
    silenced = _print_diagnostics(results, rules)
    if any(r.internal_error for r in results):
        return _internal(results)
    if mode == "check_output":
        return _check_output(results, destinations, target, silenced)
    code = _act(results, mode, destinations)
    _summary(results, mode, target, silenced)
    return code


def _check_output(results: list[FileResult], destinations: dict[str, str], target: str, silenced: int) -> int:
    stale = stale_outputs(results, destinations)
    sys.stdout.writelines(f"{s.reason}: {s.destination}\n" for s in stale)
    _summary(results, "check_output", target, silenced, changed=len(stale))
    return EXIT_DIAGNOSTICS if stale or any(r.has_errors for r in results) else EXIT_OK


def _print_diagnostics(results: list[FileResult], rules: Rules) -> int:
    style, silenced = Style(wants_color(sys.stderr)), 0
    for result in results:
        kept, quiet = rules.keep(result.diagnostics, result.file.source)
        silenced += quiet
        for diagnostic in kept:
            print(render_text(diagnostic, style), file=sys.stderr)
    return silenced


def _internal(results: list[FileResult]) -> int:
    for result in results:
        if result.internal_error:
            print(
                f"{result.file.path}: internal error in npudsl (please report):\n{result.internal_error}",
                file=sys.stderr,
            )
    return EXIT_USAGE


def _act(results: list[FileResult], mode: str, destinations: dict[str, str]) -> int:
    changed = [r for r in results if r.changed]
    failed = any(r.has_errors for r in results)
    if mode == "output":
        write_all([r for r in results if not r.has_errors and r.file.source is not None], destinations)
    elif mode == "in_place":
        write_all(changed, {r.file.path: r.file.path for r in changed})
    elif mode == "diff":
        sys.stdout.writelines(unified_diff(r.file.source or "", r.code or "", r.file.path) for r in changed)
    elif mode == "check":
        sys.stdout.writelines(f"would change: {shown_path(r.file.path)}\n" for r in changed)
    else:
        _print_stdout(results, changed)
    return EXIT_DIAGNOSTICS if failed or (mode == "check" and changed) else EXIT_OK


def _print_stdout(results: list[FileResult], changed: list[FileResult]) -> None:
    if len(results) == 1 and not results[0].has_errors and results[0].file.source is not None:
        result = results[0]
        sys.stdout.write(result.code if result.code is not None else result.file.source or "")
    elif len(results) > 1 and changed:
        print(
            f"npudsl: {count(len(changed), 'file')} would change; nothing written (use -o OUT, --in-place or --diff)",
            file=sys.stderr,
        )


_VERBS = {"output": "changed", "in_place": "rewritten", "stdout": "changed", "check_output": "out of date"}


def _summary(results: list[FileResult], mode: str, target: str, silenced: int, changed: int | None = None) -> None:
    changed = sum(1 for r in results if r.changed) if changed is None else changed
    sys.stdout.flush()  # what went to stdout before the summary (stderr), also through one pipe
    errors = sum(1 for r in results if r.has_errors)
    warnings = sum(1 for r in results for d in r.diagnostics if d.severity.value == "warning") - silenced
    verb = _VERBS.get(mode, "would change") if mode != "stdout" or len(results) == 1 else "would change"
    quiet = f", {silenced} silenced" if silenced else ""
    print(
        f"npudsl: {count(len(results), 'file')}, {changed} {verb}, {errors} with errors, "
        f"{count(warnings, 'warning')}{quiet} (target {target})",
        file=sys.stderr,
    )
