"""``npudsl check``: every diagnostic of a run, as text or JSON lines; nothing is written.

Exit codes: 0 no errors (warnings allowed), 1 errors, 2 usage or internal error.
"""

from __future__ import annotations

import argparse
import json
import sys

from codegen import pyast
from codegen.checks.pipeline import FileReport, check_file
from codegen.diagnostics import Diagnostic, Severity
from codegen.run import discover, index_run, read_sources
from npudsl.devices import DEFAULT_DEVICE, Device, DeviceError, custom_device, get_device

__all__ = ["run_check"]

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def run_check(args: argparse.Namespace) -> int:
    try:
        device = _device(args)
    except DeviceError as exc:
        print(f"npudsl check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    files = read_sources(discover(args.paths))
    with pyast.shared_trees():
        index = index_run(files)
        reports = [check_file(f, index, target=args.target, device=device) for f in files]
    diagnostics = [d for r in reports for d in r.diagnostics]
    for diagnostic in diagnostics:
        print(_render(diagnostic, args.format))
    return _finish(reports, diagnostics, device)


def _device(args: argparse.Namespace) -> Device:
    if getattr(args, "cores", None):
        return custom_device(args.cores)
    if getattr(args, "device", None):
        return get_device(args.device)
    return DEFAULT_DEVICE


def _render(diagnostic: Diagnostic, form: str) -> str:
    if form == "json":
        return json.dumps(diagnostic.to_json(), sort_keys=True)
    return diagnostic.format()


def _finish(reports: list[FileReport], diagnostics: list[Diagnostic], device: Device) -> int:
    internal = [r for r in reports if r.internal_error]
    for report in internal:
        print(f"{report.path}: internal error in npudsl (please report):\n{report.internal_error}", file=sys.stderr)
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    print(f"npudsl check: {len(reports)} files, {errors} errors, {len(diagnostics) - errors} warnings "
          f"(device {device.describe()})", file=sys.stderr)
    if internal:
        return EXIT_USAGE
    return EXIT_ERRORS if errors else EXIT_OK
