"""``npudsl schedule``: draw a model's captured schedule, as an SVG timeline or a Chrome trace.

Usage errors (a missing file, a bad option, an unknown ``-o`` suffix) are found
before torch is imported. The summary line goes to stderr, so ``npudsl schedule
m.py > m.svg`` writes only the picture.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from npudsl.cli.args import EXIT_DIAGNOSTICS, EXIT_OK, UsageError, command_parser, existing_paths
from npudsl.errors import NpudslError

__all__ = ["build_parser", "main", "run_schedule"]

_EXAMPLES = """  npudsl schedule examples/moe_decoder.py -o moe.svg     a timeline picture
  npudsl schedule examples/moe_decoder.py -o moe.json    a trace for Perfetto or chrome://tracing
  npudsl schedule model.py --model Decoder --inputs make_inputs -o d.svg
  npudsl schedule model.py --inputs tests/inputs.py:decoder_inputs > d.svg
  npudsl schedule examples/*.py -d pictures/            one SVG per file"""

_SUFFIXES = (".svg", ".json")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "schedule",
        examples=_EXAMPLES,
        exit_extra=" (a file cannot be pictured)",
        description=(
            "Capture a model's graph with torch.compile (portable target, on the CPU) and draw which op runs on which "
            "stream and when, with the predicted saving over one stream. The file defines the model (an nn.Module "
            "class) and a function that returns its inputs."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="Python files defining a model")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write OUT.svg (a picture) or OUT.json (a Chrome Trace "
        "Event file); one FILE only; e.g. -o moe.svg (default: the SVG on standard output)",
    )
    where.add_argument("-d", "--directory", metavar="DIR", help="write DIR/<file>.svg for every FILE; e.g. -d out/")
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="the model class, or a function that returns the model: a "
        "name in FILE, FILE.py:NAME or package.module:NAME (default: the last nn.Module class of the "
        "file whose constructor needs no arguments); e.g. --model make.py:make_model",
    )
    parser.add_argument(
        "--inputs",
        metavar="FUNC",
        help="the function returning the inputs: a name in FILE, "
        "FILE.py:NAME or package.module:NAME (default: example_inputs); e.g. --inputs make_inputs",
    )
    parser.add_argument(
        "--measured", action="store_true", help="time each op eagerly on this CPU instead of the cost model"
    )
    parser.add_argument(
        "--link-bandwidth",
        type=_positive,
        metavar="GB/S",
        default=50.0,
        help="the link bandwidth that prices collectives, in GB/s (default: 50); e.g. --link-bandwidth 25",
    )
    return parser


def _validate(args: argparse.Namespace) -> None:
    existing_paths(args.files)
    if "-" in args.files:
        raise UsageError("schedule needs model files; '-' (standard input) cannot be imported")
    if len(args.files) > 1 and not args.directory:
        raise UsageError("several FILEs need -d DIR (-o and standard output take one picture)")
    if args.output and not args.output.endswith(_SUFFIXES):
        raise UsageError(f"-o {args.output}: the name must end in .svg (a picture) or .json (a trace)")
    if args.output and os.path.isdir(args.output):
        raise UsageError(f"-o {args.output}: is a folder; give a file name ending in .svg or .json")


def _destination(args: argparse.Namespace, path: str) -> str | None:
    if args.output:
        return str(args.output)
    if args.directory:
        return os.path.join(args.directory, os.path.splitext(os.path.basename(path))[0] + ".svg")
    return None


def _write(out: str, text: str) -> None:
    from npudsl.cli.files import write_atomic

    try:
        write_atomic(out, text)
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None


def _one(args: argparse.Namespace, path: str) -> None:
    from npudsl.timeline.cost import Hardware
    from npudsl.timeline.draw import picture
    from npudsl.timeline.svg import time_unit

    result = picture(
        path,
        model=args.model,
        inputs=args.inputs,
        measured=args.measured,
        hardware=Hardware(link_bandwidth=args.link_bandwidth * 1e9),
    )
    s = result.schedule
    out = _destination(args, path)
    text = result.trace if out and out.endswith(".json") else result.svg
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()  # the picture before the summary (stderr), also through one pipe
    else:
        _write(out, text)
    per, unit = time_unit(max(s.serial, s.makespan, 1e-12))  # the picture's unit, so both say the same
    print(
        f"{path}: {len(s.streams)} streams ({', '.join(s.streams)}), {s.makespan / per:.4g} {unit} vs "
        f"{s.serial / per:.4g} {unit} on one stream: predicted saving {100 * s.saving:.1f}%"
        + (f"; wrote {out}" if out else ""),
        file=sys.stderr,
    )


def run_schedule(args: argparse.Namespace) -> int:
    _validate(args)
    failed = 0
    for path in args.files:
        try:
            _one(args, path)
        except UsageError:
            raise
        except NpudslError as error:
            print(error, file=sys.stderr)  # path:line:col: message (the user's file), else what went wrong
            failed += 1
    return EXIT_DIAGNOSTICS if failed else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m npudsl.timeline``: the same as ``npudsl schedule``."""
    from npudsl.cli import main as npudsl_main

    return npudsl_main(["schedule", *(sys.argv[1:] if argv is None else argv)])
