"""Positioned diagnostics, and the error types that carry them."""

from __future__ import annotations

import enum

import attrs

__all__ = ["Diagnostic", "Severity", "TransformError"]


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@attrs.frozen(kw_only=True)
class Diagnostic:
    """One finding at ``path:line:col`` (1-based line and column)."""

    path: str
    line: int = attrs.field(validator=attrs.validators.ge(1))
    col: int = attrs.field(validator=attrs.validators.ge(1))
    code: str = attrs.field(validator=attrs.validators.matches_re(r"NPD\d{3}"))
    message: str
    hint: str = ""
    severity: Severity = Severity.ERROR

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
