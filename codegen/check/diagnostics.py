"""Positioned diagnostics, and the error types that carry them (each code and its severity: ``npudsl.codes``)."""

from __future__ import annotations

import attrs

from npudsl.codes import TABLE, Severity, severity_of

__all__ = ["Diagnostic", "Severity", "TransformError"]


def _in_table(_instance: object, _attribute: attrs.Attribute, code: str) -> None:
    if code not in TABLE:
        raise ValueError(f"{code} is not in npudsl.codes.TABLE")


def _table_severity(diagnostic: Diagnostic) -> Severity:
    return severity_of(diagnostic.code) if diagnostic.code in TABLE else Severity.ERROR


def _severity_of_code(diagnostic: Diagnostic, _attribute: attrs.Attribute, severity: Severity) -> None:
    if severity is not _table_severity(diagnostic):
        raise ValueError(
            f"{diagnostic.code}: npudsl.codes.TABLE says {_table_severity(diagnostic).value}, not {severity.value}"
        )


@attrs.frozen(kw_only=True)
class Diagnostic:
    """One finding at ``path:line:col`` (1-based line and column)."""

    path: str
    line: int = attrs.field(validator=attrs.validators.ge(1))
    col: int = attrs.field(validator=attrs.validators.ge(1))
    code: str = attrs.field(validator=_in_table)
    message: str
    hint: str = ""
    severity: Severity = attrs.field(
        default=attrs.Factory(_table_severity, takes_self=True), validator=_severity_of_code
    )

    def format(self) -> str:
        hint = f" (hint: {self.hint})" if self.hint else ""
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}{hint}"

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "hint": self.hint,
        }


class TransformError(Exception):
    """The input has errors; nothing was written. ``diagnostics`` says where."""

    def __init__(self, diagnostics: tuple[Diagnostic, ...]) -> None:
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics))
