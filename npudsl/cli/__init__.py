"""The ``npudsl`` command (CONTRACT section 4): ``main(argv) -> exit code``.

Each subcommand lives in its own module, imported only when it runs, so
``--help``, ``--version`` and usage errors answer at once and ``transform`` and
``check`` never import torch. Options may come before or after the PATHs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Sequence

from npudsl._version import __version__
from npudsl.cli.args import EXIT_CODES, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from npudsl.errors import NpudslError

__all__ = ["COMMANDS", "main"]

# name -> (module, the function that runs it, one line for `npudsl --help`)
COMMANDS = {
    "transform": ("npudsl.cli.transform", "run_transform", "rewrite the decorators into explicit stream code"),
    "check": ("npudsl.cli.check", "run_check", "report multi-stream mistakes without writing anything"),
    "schedule": ("npudsl.timeline.cli", "run_schedule", "draw the captured schedule (SVG or Chrome trace JSON)"),
    "suggest": ("npudsl.suggest.cli", "run_suggest", "propose @on_stream decorators for an unannotated model"),
}

_EXAMPLES = """examples:
  npudsl transform src/ --diff          what the decorators become, as a patch
  npudsl check src/ --format github     annotations in a GitHub Actions job
  npudsl schedule model.py -o model.svg a timeline picture of the model's streams
  npudsl suggest model.py --diff        the decorators worth adding to an unannotated model
  npudsl COMMAND --help                 every option of a command, with examples"""


def _top_parser() -> argparse.ArgumentParser:
    listing = "\n".join(f"  {name:<10} {summary}" for name, (_, _, summary) in COMMANDS.items())
    parser = argparse.ArgumentParser(
        prog="npudsl",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Declarative multi-stream scheduling for torch.compile on Ascend NPUs and CUDA GPUs.",
        epilog=f"commands:\n{listing}\n\n{_EXAMPLES}\n\n{EXIT_CODES.format(extra='')}",
    )
    parser.add_argument("--version", action="version", version=f"npudsl {__version__}")
    parser.add_argument("command", choices=sorted(COMMANDS), metavar="COMMAND", help="one of: " + ", ".join(COMMANDS))
    parser.add_argument("arguments", nargs=argparse.REMAINDER, metavar="...", help="the command's own arguments")
    return parser


def _dispatch(argv: list[str]) -> int:
    top = _top_parser().parse_args(argv[:1] if argv and not argv[0].startswith("-") else argv)
    module_name, function, _ = COMMANDS[top.command]
    module = importlib.import_module(module_name)
    args = module.build_parser().parse_intermixed_args(argv[1:])
    return int(getattr(module, function)(args))


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # clean up (temporary files, workers) as for Ctrl-C


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # the real command, not a test
        signal.signal(signal.SIGTERM, _terminated)
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(argv)
    except SystemExit as exit_:  # argparse: --help, --version, usage errors (message already printed)
        return EXIT_OK if exit_.code in (0, None) else EXIT_USAGE
    except NpudslError as error:
        print(f"npudsl: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("npudsl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `npudsl ... | head`: the reader has gone, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
