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

    def site_events(self, own: dict[int, int] | None = None) -> Callable[[Site], SiteEvents]:
        """The fork and join events of a call, defined by the module (fresh names, the callee's tags); a call
        in ``own`` (``own_joins.py``: its index -> a number) records a join event of its own, that number
        appended to the callee's join."""
        made: dict[tuple[str, int], SiteEvents] = {}
        own = own or {}

        def events(site: Site) -> SiteEvents:
            key, number = site.callee.key, own.get(site.index, 1)  # type: ignore[attr-defined]
            if (key, number) not in made:
                fork, join = site.callee.fork, site.callee.join  # type: ignore[attr-defined]
                var, tag = (join.var, join.tag) if number == 1 else (f"{join.var}_{number}", f"{join.tag}.{number}")
                made[key, number] = SiteEvents(
                    fork=attrs.evolve(fork, var=self.names.global_name(fork.var)),
                    join=attrs.evolve(join, var=self.names.global_name(var), tag=tag),
                )
            return made[key, number]

        return events
