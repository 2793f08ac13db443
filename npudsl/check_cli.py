"""``npudsl check``: every diagnostic of a run, as text or JSON lines; nothing is written."""

from __future__ import annotations

import argparse
import json
import sys

from codegen.diagnostics import Severity
from codegen.run import discover, read_sources, run

__all__ = ["run_check"]


def run_check(args: argparse.Namespace) -> int:
    files = read_sources(discover(args.paths))
    results = run(files, target=args.target, jobs=1)
    diagnostics = [d for r in results for d in r.diagnostics]
    for diagnostic in diagnostics:
        if args.format == "json":
            print(json.dumps(diagnostic.to_json(), sort_keys=True))
        else:
            print(diagnostic.format())
    internal = [r for r in results if r.internal_error]
    for result in internal:
        print(f"{result.file.path}: internal error in npudsl:\n{result.internal_error}", file=sys.stderr)
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    print(f"npudsl check: {len(results)} files, {errors} errors, {len(diagnostics) - errors} warnings",
          file=sys.stderr)
    if internal:
        return 2
    return 1 if errors else 0
