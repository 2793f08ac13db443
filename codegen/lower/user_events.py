"""User events (``@records("e")``, ``@after("e")``): the variable and tag of each, fresh in the module.

User event names are scoped to their class, so two classes may both record ``"done"``; a shared event
(``"ns:name"``) is one event for every class and file of the run. Each gets one variable, qualified with its
class only when two classes share the name, and fresh against every name of the module and every other event.
"""

from __future__ import annotations

from collections import Counter

import attrs

from codegen.frontend.ir import ModuleIR
from codegen.lower import naming
from codegen.lower.plan import EventRef
from npudsl._rules import is_shared_event

__all__ = ["UserEvents"]


@attrs.define(eq=False)
class UserEvents:
    """User event names are scoped to their class; a variable is qualified only when two classes share a name,
    and is fresh against every name of the module and every other event."""

    ir: ModuleIR
    taken: set[str]
    owners: Counter[str] = attrs.field(init=False)
    chosen: dict[tuple[str | None, str], str] = attrs.Factory(dict)
    listed: frozenset[tuple[str | None, str]] = frozenset()  # (class, name): a record orders on a container

    def __attrs_post_init__(self) -> None:
        pairs = {
            (fn.owner, name) for fn in self.ir.functions for spec in (*fn.waits, *fn.records) for name in spec.names
        }
        self.owners = Counter(name for _, name in pairs)

    def waiters(self, owner: str | None, name: str) -> tuple[str, ...]:
        """The functions of the event's scope that wait for it, in source order."""
        return tuple(
            fn.qualname
            for fn in self.ir.functions
            if fn.owner == owner and any(name in spec.names for spec in fn.waits)
        )

    def ref(self, owner: str | None, name: str) -> EventRef:
        """A class's event (tag ``module.Class.name``), or a shared one (``ns:name``: the tag is the name, the
        same in every class and file; its waiters are not all known here)."""
        shared = is_shared_event(name)
        key = (None if shared else owner, name)
        if key not in self.chosen:
            wanted = naming.event_var(name.replace(":", "_"), owner, shared=not shared and self.owners[name] > 1)
            self.chosen[key] = naming.fresh_name(wanted, self.taken)
            self.taken.add(self.chosen[key])
        tag = name if shared else naming.event_tag(self.ir.module_name, owner, name)
        return EventRef(
            var=self.chosen[key],
            tag=tag,
            user=True,
            name=name,
            shared=shared,
            listed=not shared and key in self.listed,
            waiters=() if shared else self.waiters(owner, name),
        )
