"""One module as the planning of its callers reads it, and what that planning adds to it.

Every caller of a module is planned against the same module: its IR, tree, run index and hygienic names. What the
planning of one caller adds is the module's too: the imports a guard read through another module needs, the
warnings (NPD508), and the generated names, fresh against every identifier of the module and every name generated
so far. What is costly to read and the same for every method of a class (the guards spelled otherwise that hold
one value) is read once per class.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.frontend.ir import ModuleIR
from codegen.frontend.positions import Positions
from codegen.lower.flow.caller_facts import SiteEvents
from codegen.lower.flow.guard_alias import guard_aliases
from codegen.lower.flow.site_sync import Flags
from codegen.lower.flow.sites import Site
from codegen.lower.flow.stream_free import StreamFree
from codegen.lower.hygiene import ModuleNames

__all__ = ["CallerModule"]


@attrs.define(eq=False)
class CallerModule:
    ir: ModuleIR
    tree: ast.Module
    index: object  # the RunIndex
    names: ModuleNames
    positions: Positions
    imports: list[str] = attrs.Factory(list)
    diagnostics: list[Diagnostic] = attrs.Factory(list)
    stream_free: StreamFree = attrs.field(init=False)
    _aliases: dict[tuple[str, str | None], dict[str, str]] = attrs.field(factory=dict, init=False)  # per class

    def __attrs_post_init__(self) -> None:
        self.stream_free = StreamFree(self.tree)

    def aliases(self, owner: str, receiver: str | None, sites: list[Site]) -> dict[str, str]:
        """Guards of ``owner``'s methods spelled otherwise that hold one value; read only where a guard is spelled
        on a submodule (``self.shared.multistream``), once per class."""
        if not any(s.guard.expr and s.guard.expr.count(".") >= 2 for s in sites):
            return {}
        if (owner, receiver) not in self._aliases:
            self._aliases[owner, receiver] = guard_aliases(self.tree, owner, receiver)
        return self._aliases[owner, receiver]

    def warn(self, node: ast.AST, code: str, message: str, hint: str) -> None:
        loc = self.positions.loc(node)
        self.diagnostics.append(
            Diagnostic(
                path=self.ir.path,
                line=loc.line,
                col=loc.col,
                code=code,
                message=message,
                hint=hint,
                severity=Severity.WARNING,
            )
        )

    def flags(self) -> Flags:
        """Fresh against every identifier of the module (the caller's among them) and every generated name."""
        return Flags(taken=set(self.names.generated.values()) | set(self.names.taken))

    def site_events(self) -> Callable[[Site], SiteEvents]:
        """The fork and join events of a call, defined by the module (fresh names, the callee's tags)."""
        made: dict[str, SiteEvents] = {}

        def events(site: Site) -> SiteEvents:
            key = site.callee.key  # type: ignore[attr-defined]
            if key not in made:
                fork, join = site.callee.fork, site.callee.join  # type: ignore[attr-defined]
                made[key] = SiteEvents(
                    fork=attrs.evolve(fork, var=self.names.global_name(fork.var)),
                    join=attrs.evolve(join, var=self.names.global_name(join.var)),
                )
            return made[key]

        return events
