"""The files a ``transform`` or ``check`` run reads: the PATHs, standard input, the configuration."""

from __future__ import annotations

import argparse
import os
import sys

from codegen.driver.discover import Excludes, discover
from codegen.driver.modules import module_name_for
from codegen.driver.run import SourceFile, read_sources, source_of
from codegen.targets import TARGETS
from npudsl.cli.args import UsageError
from npudsl.cli.config import Config
from npudsl.cli.noqa import Rules

__all__ = ["STDIN", "gather", "jobs_for", "rules_for", "target_for"]

STDIN = "-"


def _stdin(name: str | None) -> SourceFile:
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("standard input is not valid UTF-8") from None
    path = name or "<stdin>"
    return source_of(text, path=path, module=module_name_for(name) if name else "stdin")


def gather(args: argparse.Namespace, config: Config) -> list[SourceFile]:
    """Every file the run reads, standard input for ``-``."""
    if args.paths == [STDIN]:
        return [_stdin(getattr(args, "stdin_filename", None))]
    if args.exclude is not None:
        excludes = Excludes(patterns=tuple(args.exclude), base=os.getcwd())
    else:
        excludes = Excludes(patterns=config.exclude, base=config.base)
    return read_sources(discover(args.paths, excludes=excludes))


def target_for(args: argparse.Namespace, config: Config) -> str:
    target = args.target or config.target or "aclgraph"
    if target not in TARGETS:
        where = f"{config.path}: [tool.npudsl] target" if not args.target else "--target"
        raise UsageError(f"{where}: unknown target {target!r}; known targets: {', '.join(sorted(TARGETS))}")
    return target


def jobs_for(args: argparse.Namespace, config: Config) -> int | None:
    """The workers asked for; None: as many as the work is worth (``codegen.driver.workers.auto_jobs``)."""
    return args.jobs or config.jobs or None


def rules_for(args: argparse.Namespace, config: Config) -> Rules:
    select = args.select if args.select is not None else config.select
    ignore = args.ignore if args.ignore is not None else config.ignore
    return Rules(select=tuple(select), ignore=tuple(ignore))
