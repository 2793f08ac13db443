"""What every rule of ``npudsl check`` shares: the context it reads, what it finds, and the diagnostic that makes."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

import attrs

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.frontend.ir import Loc, ModuleIR, StreamFunction
from codegen.index.index import RunIndex
from npudsl import codes
from npudsl.devices import Device

__all__ = ["Context", "Finding", "Rule"]


@attrs.frozen(kw_only=True)
class Context:
    """One module's IR, seen with the run index, for one target and one device."""

    ir: ModuleIR
    index: RunIndex
    target: str
    device: Device
    tree: ast.Module | None = None  # the module's ``ast``, for rules that read more than the decorators
    source: str | None = None  # its text (for positions)
    memo: dict[str, object] = attrs.field(factory=dict, eq=False, repr=False)  # facts several rules read, once

    def key(self, fn: StreamFunction) -> str:
        """The run-index key of ``fn``: ``module:Class.method`` or ``module:function``."""
        return f"{self.ir.module_name}:{fn.qualname}"


@attrs.frozen(kw_only=True)
class Finding:
    """One problem a rule found, before it is given the rule's code and the module's path."""

    loc: Loc
    message: str
    hint: str


def _checked_code(_rule: Rule, _attribute: attrs.Attribute, code: str) -> None:
    if codes.TABLE.get(code) is None or codes.TABLE[code].origin != "check":
        raise ValueError(f"{code}: a rule's code is a row of npudsl.codes.TABLE whose origin is check")


@attrs.frozen(kw_only=True)
class Rule:
    """A check with a stable code from ``npudsl.codes`` (its severity and title too): ``find`` yields its findings
    in one module."""

    code: str = attrs.field(validator=_checked_code)
    find: Callable[[Context], Iterable[Finding]]

    @property
    def severity(self) -> Severity:
        return codes.TABLE[self.code].severity

    @property
    def title(self) -> str:
        return codes.TABLE[self.code].title

    def run(self, ctx: Context) -> list[Diagnostic]:
        return [
            Diagnostic(
                path=ctx.ir.path,
                line=f.loc.line,
                col=f.loc.col,
                code=self.code,
                message=f.message,
                hint=f.hint,
                severity=self.severity,
            )
            for f in self.find(ctx)
        ]
