"""``npudsl check --format sarif``: one SARIF 2.1.0 log for the run, as code-scanning services read it.

Each code is a rule described by its own row of ``npudsl.codes`` (title, fix,
level), each diagnostic a result at its 1-based line and column; a path inside
the current folder is a relative URI (what GitHub code scanning matches against
the repository), any other a ``file://`` URI.
"""

from __future__ import annotations

import json
import pathlib
import urllib.parse
from collections.abc import Sequence
from typing import Any

from codegen.check.diagnostics import Diagnostic, Severity
from npudsl import codes
from npudsl._version import __version__
from npudsl.cli.report import portable_path

__all__ = ["sarif_log"]

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    chosen = portable_path(path)
    if chosen.startswith("/"):
        return pathlib.Path(chosen).as_uri()
    return urllib.parse.quote(chosen)


def _rule(code: str) -> dict[str, Any]:
    """The rule as ``npudsl.codes`` states it: its own title, fix, and default level."""
    row = codes.TABLE[code]
    return {
        "id": code,
        "name": row.title,
        "shortDescription": {"text": f"{code}: {row.title}"},
        "help": {"text": row.fix},
        "defaultConfiguration": {"level": row.severity.value},
        "properties": {"origin": row.origin},
    }


def _result(diagnostic: Diagnostic, index: int) -> dict[str, Any]:
    hint = f" (hint: {diagnostic.hint})" if diagnostic.hint else ""
    region = {"startLine": diagnostic.line, "startColumn": diagnostic.col}
    return {
        "ruleId": diagnostic.code,
        "ruleIndex": index,
        "level": "error" if diagnostic.severity is Severity.ERROR else "warning",
        "message": {"text": diagnostic.message + hint},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(diagnostic.path)}, "region": region}}],
    }


def sarif_log(diagnostics: Sequence[Diagnostic]) -> str:
    """The SARIF document (JSON text) for ``diagnostics``."""
    codes = sorted({d.code for d in diagnostics})
    index = {code: i for i, code in enumerate(codes)}
    driver = {
        "name": "npudsl",
        "version": __version__,
        "semanticVersion": __version__,
        "rules": [_rule(code) for code in codes],
    }
    run = {
        "tool": {"driver": driver},
        "columnKind": "unicodeCodePoints",
        "results": [_result(d, index[d.code]) for d in diagnostics],
    }
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"
