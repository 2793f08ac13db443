"""``python3 -m npudsl.timeline FILE... [-o OUT.svg | -d DIR] [--model NAME] [--measured]``.

Exit codes as ``npudsl``: 0 fine, 1 an example cannot be pictured, 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import sys

from npudsl.errors import NpudslError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="npudsl schedule",
                                     description="Draw an example's multi-stream schedule as an SVG timeline.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="example files defining example_inputs()")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="OUT.svg", help="the SVG file (one FILE only)")
    where.add_argument("-d", "--directory", metavar="DIR", help="write DIR/<example>.svg for every FILE")
    parser.add_argument("--model", metavar="NAME", help="the model class (default: the last nn.Module class "
                        "of the file whose constructor needs no arguments)")
    parser.add_argument("--measured", action="store_true", help="time each op eagerly instead of the cost model")
    return parser


def _destination(args: argparse.Namespace, path: str) -> str | None:
    if args.output:
        return args.output
    if args.directory:
        return os.path.join(args.directory, os.path.splitext(os.path.basename(path))[0] + ".svg")
    return None


def _one(args: argparse.Namespace, path: str) -> None:
    from npudsl.timeline import picture

    result = picture(path, model=args.model, measured=args.measured)
    s = result.schedule
    print(f"{path}: {len(s.streams)} streams ({', '.join(s.streams)}), {s.makespan:.4g} vs {s.serial:.4g} "
          f"{result.unit} on one stream: predicted saving {100 * s.saving:.1f}%")
    out = _destination(args, path)
    if out is None:
        sys.stdout.write(result.svg)
        return
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        handle.write(result.svg)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.output and len(args.files) > 1:
        print("npudsl schedule: -o takes one FILE; use -d DIR for several", file=sys.stderr)
        return 2
    failed = 0
    for path in args.files:
        try:
            _one(args, path)
        except NpudslError as error:
            print(f"npudsl schedule: {error}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0
