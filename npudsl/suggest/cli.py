"""``npudsl suggest``: propose ``@on_stream`` decorators for an unannotated model, with the predicted saving.

Usage errors are found before torch is imported. The summary line goes to
stderr, so ``npudsl suggest m.py --diff > m.patch`` writes only the patch.
"""

from __future__ import annotations

import argparse
import os
import sys

from npudsl.cli.args import EXIT_DIAGNOSTICS, EXIT_OK, UsageError, command_parser, existing_paths, positive_int

__all__ = ["build_parser", "run_suggest"]

_EXAMPLES = """  npudsl suggest model.py                       what could overlap, and the predicted saving
  npudsl suggest model.py --diff | git apply    the decorators, as a patch
  npudsl suggest model.py --in-place            write them into model.py
  npudsl suggest model.py --streams 2 -o s.svg  up to two side streams, with the predicted picture
  npudsl suggest model.py --model Decoder --inputs make_inputs --sync-cost 2
  npudsl suggest modeling_qwen2_moe.py --model make.py:make_model --inputs make.py:example_inputs --explain"""

_SUFFIXES = (".svg", ".json")


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "suggest",
        examples=_EXAMPLES,
        exit_extra=" (the file cannot be captured)",
        description=(
            "Capture an unannotated model with torch.compile (portable target, on the CPU), find the calls of its "
            "methods and submodules that can run beside each other, and propose @on_stream decorators for the ones "
            "whose predicted saving beats the synchronization they need. Prints a report, a unified diff (--diff) or "
            "writes the file (--in-place); nothing worth proposing: no diff, exit 0."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="a Python file defining the model")
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="the model class, or a function that returns the model: a "
        "name in FILE, FILE.py:NAME or package.module:NAME (default: Model, else the last nn.Module "
        "class whose constructor needs no arguments); e.g. --model make.py:make_model",
    )
    parser.add_argument(
        "--inputs",
        metavar="FUNC",
        help="the function returning the inputs: a name in FILE, "
        "FILE.py:NAME or package.module:NAME (default: example_inputs); e.g. --inputs make_inputs",
    )
    parser.add_argument(
        "--streams",
        type=positive_int,
        default=1,
        metavar="N",
        help="the most side streams to use (default: 1); e.g. --streams 2",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print the proposal as a unified diff (git apply-able)")
    mode.add_argument("--in-place", action="store_true", help="write the proposal into FILE (atomically)")
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="also write the predicted timeline: OUT.svg (a "
        "picture) or OUT.json (a Chrome trace); e.g. -o schedule.svg",
    )
    parser.add_argument(
        "--sync-cost",
        type=_non_negative,
        metavar="US",
        default=None,
        help="what one sync (an event record and its wait) costs, in microseconds; a move must "
        "save more than its syncs cost (default: 0.001); e.g. --sync-cost 2",
    )
    parser.add_argument(
        "--measured", action="store_true", help="time each op eagerly on this CPU instead of the cost model"
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also list, on stderr, every call site considered and why it was or was not moved",
    )
    return parser


def _validate(args: argparse.Namespace) -> None:
    existing_paths([args.file])
    if args.file == "-" or os.path.isdir(args.file):
        raise UsageError(f"suggest needs one model file; {args.file!r} cannot be imported as one")
    if args.output and not args.output.endswith(_SUFFIXES):
        raise UsageError(f"-o {args.output}: the name must end in .svg (a picture) or .json (a trace)")


def _write(out: str, text: str) -> None:
    from npudsl.cli.files import write_atomic

    try:
        write_atomic(out, text)
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None


def _picture(suggestion, out: str) -> None:
    from npudsl.timeline.svg import render
    from npudsl.timeline.trace import chrome_trace

    title = f"{os.path.basename(suggestion.path)}: {suggestion.model}, as suggested"
    draw = chrome_trace if out.endswith(".json") else render
    _write(out, draw(suggestion.plan.schedule, title=title, note=suggestion.note))


def run_suggest(args: argparse.Namespace) -> int:
    _validate(args)
    from npudsl.cli.diffs import unified_diff
    from npudsl.errors import NpudslError
    from npudsl.suggest.plan import SYNC_COST
    from npudsl.suggest.report import explanation, report, summary
    from npudsl.suggest.run import suggest

    try:
        found = suggest(
            args.file,
            model=args.model,
            inputs=args.inputs,
            streams=args.streams,
            measured=args.measured,
            sync_cost=SYNC_COST if args.sync_cost is None else args.sync_cost,
        )
    except NpudslError as error:
        print(error, file=sys.stderr)  # path:line:col: message (the user's file), else what went wrong
        return EXIT_DIAGNOSTICS
    if args.explain:
        sys.stderr.write(explanation(found))
    if args.output:
        _picture(found, args.output)
    if args.diff:
        sys.stdout.write(unified_diff(found.source, found.proposed, args.file))
    elif args.in_place and found.changed:
        _write(args.file, found.proposed)
    elif not args.in_place:
        sys.stdout.write(report(found))
    done = "; wrote " + args.file if args.in_place and found.changed else ""
    print(summary(found) + done, file=sys.stderr)
    return EXIT_OK
