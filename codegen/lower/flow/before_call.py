"""What the caller's stream runs just before a planned call, outside its stream's block.

A call's computed arguments are bound to fresh names first (``site_sync.hoisted_arguments``: a guard read from an
argument is read through that name at the joins), and a guard the joins read through a flag is read into it there,
once, as the call would read it.
"""

from __future__ import annotations

from codegen.lower.flow.caller_facts import SiteSync
from codegen.lower.flow.sites import Site
from codegen.lower.flow.spelling import spelled_expr
from codegen.lower.flow.statements import slot_node
from codegen.lower.plan import Assign, Step

__all__ = ["before_call"]


def before_call(site: Site, sync: SiteSync) -> list[Step]:
    """What the caller's stream runs just before the call: its computed arguments bound to fresh names, and its
    guard read into its flag."""
    before: list[Step] = [
        Assign(name=name, value=spelled_expr(slot_node(site.call.call, slot))) for slot, name in sync.hoisted
    ]
    if sync.flag and sync.guard_text:
        before.append(Assign(name=sync.flag, value=sync.guard_text))
    return before
