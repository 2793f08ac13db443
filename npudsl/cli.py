"""``npudsl transform`` and ``npudsl check`` (CONTRACT section 4)."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Sequence

from codegen.diagnostics import Severity
from codegen.run import FileResult, discover, read_sources, run
from codegen.targets import TARGETS
from npudsl.files import write_atomic

__all__ = ["main"]

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="npudsl", description="Declarative multi-stream scheduling for torch.compile.")
    commands = parser.add_subparsers(dest="command", required=True)
    transform = commands.add_parser("transform", help="rewrite the decorators into explicit stream code")
    transform.add_argument("paths", nargs="+", metavar="PATH")
    transform.add_argument("--target", default="aclgraph", choices=sorted(TARGETS))
    out = transform.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", metavar="OUT", help="write every result under OUT")
    out.add_argument("--in-place", action="store_true", help="rewrite the files, atomically")
    out.add_argument("--diff", action="store_true", help="print a unified diff")
    out.add_argument("--check", action="store_true", help="exit 1 when a file would change")
    transform.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N")
    check = commands.add_parser("check", help="report multi-stream mistakes without writing anything")
    check.add_argument("paths", nargs="+", metavar="PATH")
    device = check.add_mutually_exclusive_group()
    device.add_argument("--device", metavar="NAME")
    device.add_argument("--cores", metavar="AIC,AIV")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("--target", default="aclgraph", choices=sorted(TARGETS))
    schedule = commands.add_parser("schedule", add_help=False,
                                   help="draw an example's schedule as an SVG timeline (see `npudsl schedule -h`)")
    schedule.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.command == "schedule":
            from npudsl.timeline.cli import main as schedule

            return schedule(args.rest)
    except SystemExit as exit_:
        return EXIT_OK if exit_.code == 0 else EXIT_USAGE
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        print(f"npudsl: no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "check":
        from npudsl.check_cli import run_check

        return run_check(args)
    return _transform(args)


def _transform(args: argparse.Namespace) -> int:
    files = read_sources(discover(args.paths))
    results = run(files, target=args.target, jobs=max(1, args.jobs), progress=sys.stderr.isatty())
    _print_diagnostics(results)
    if any(r.internal_error for r in results):
        return _internal(results)
    changed = [r for r in results if r.changed]
    if args.output:
        _write_tree([r for r in results if not r.has_errors], args.output)
    elif args.in_place:
        for result in changed:
            write_atomic(result.file.path, result.code or "")
    elif args.diff:
        _print_diffs(changed)
    elif not args.check:
        _print_stdout(results, changed)
    failed = any(r.has_errors for r in results)
    _summary(results, changed, args)
    return EXIT_DIAGNOSTICS if failed or (args.check and changed) else EXIT_OK


def _print_diagnostics(results: list[FileResult]) -> None:
    for result in results:
        for diagnostic in result.diagnostics:
            print(diagnostic.format(), file=sys.stderr)


def _internal(results: list[FileResult]) -> int:
    for result in results:
        if result.internal_error:
            print(f"{result.file.path}: internal error in npudsl (please report):\n{result.internal_error}",
                  file=sys.stderr)
    return EXIT_USAGE


def _write_tree(results: list[FileResult], out: str) -> None:
    """Every result under ``out`` (unchanged files too, so ``out`` is a complete tree)."""
    for result in results:
        file = result.file
        relative = os.path.basename(file.path) if file.root == file.path else os.path.relpath(file.path, file.root)
        write_atomic(os.path.join(out, relative), result.code if result.code is not None else file.source or "")


def _print_diffs(changed: list[FileResult]) -> None:
    for result in changed:
        before = (result.file.source or "").splitlines(keepends=True)
        after = (result.code or "").splitlines(keepends=True)
        sys.stdout.writelines(difflib.unified_diff(before, after, f"a/{result.file.path}", f"b/{result.file.path}"))


def _print_stdout(results: list[FileResult], changed: list[FileResult]) -> None:
    if len(results) == 1 and not results[0].has_errors:
        sys.stdout.write(results[0].code if results[0].code is not None else results[0].file.source or "")
    elif changed:
        print(f"npudsl: {len(changed)} files would change; nothing written (use -o OUT, --in-place or --diff)",
              file=sys.stderr)


def _summary(results: list[FileResult], changed: list[FileResult], args: argparse.Namespace) -> None:
    errors = sum(1 for r in results if r.has_errors)
    warnings = sum(1 for r in results for d in r.diagnostics if d.severity is Severity.WARNING)
    verb = "would change" if args.check or not (args.output or args.in_place) else "transformed"
    print(f"npudsl: {len(results)} files, {len(changed)} {verb}, {errors} with errors, {warnings} warnings "
          f"(target {args.target})", file=sys.stderr)
