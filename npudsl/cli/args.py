"""Pieces every subcommand's parser shares: argument types, help layout, the usage error type."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

from npudsl.cli.config import CODE_PATTERN
from npudsl.codes import NO_CALL_SITE, UNUSED_RECORD
from npudsl.errors import NpudslError

__all__ = [
    "EXIT_CODES",
    "EXIT_DIAGNOSTICS",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "add_filters",
    "add_jobs",
    "codes",
    "command_parser",
    "existing_paths",
    "positive_int",
]

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

EXIT_CODES = """exit codes:
  0    fine (warnings allowed)
  1    errors in the input{extra}
  2    usage error, unreadable configuration, or an internal error in npudsl
  130  interrupted (Ctrl-C)"""


class UsageError(NpudslError):
    """The command line cannot be run as given (exit 2)."""


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def codes(text: str) -> tuple[str, ...]:
    found = tuple(c.strip().upper() for c in text.split(",") if c.strip())
    bad = [c for c in found if not CODE_PATTERN.match(c)]
    if bad or not found:
        raise argparse.ArgumentTypeError(f"{(bad or [text])[0]!r} is not a code or prefix like NPD5 or {UNUSED_RECORD}")
    return found


def command_parser(name: str, *, description: str, examples: str, exit_extra: str = "") -> argparse.ArgumentParser:
    epilog = f"examples:\n{examples}\n\n{EXIT_CODES.format(extra=exit_extra)}"
    return argparse.ArgumentParser(
        prog=f"npudsl {name}",
        description=textwrap.fill(description, 79),
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_jobs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        "-j",
        type=positive_int,
        metavar="N",
        help="worker processes (default: [tool.npudsl] jobs, else as many as the work is worth, "
        "at most one per CPU); e.g. --jobs 4",
    )


def add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--select",
        type=codes,
        metavar="CODES",
        help="report only warnings whose code starts with one of these (errors are always "
        f"reported); e.g. --select NPD5 or --select {NO_CALL_SITE},{UNUSED_RECORD}",
    )
    parser.add_argument(
        "--ignore",
        type=codes,
        metavar="CODES",
        help=f"never report warnings with these codes or prefixes; e.g. --ignore {NO_CALL_SITE}",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="skip files and folders matching GLOB (repeatable; replaces [tool.npudsl] exclude); "
        "e.g. --exclude 'legacy/*' --exclude '*_pb2.py'",
    )


def existing_paths(paths: list[str]) -> list[str]:
    """``paths`` when each exists (``-`` alone is standard input); :class:`UsageError` otherwise."""
    if "-" in paths and len(paths) > 1:
        raise UsageError("'-' (standard input) must be the only PATH")
    missing = [p for p in paths if p != "-" and not os.path.lexists(p)]
    if missing:
        raise UsageError(f"no such file or directory: {', '.join(missing)}")
    if paths == ["-"] and sys.stdin is None:
        raise UsageError("'-' given but there is no standard input")
    return paths
