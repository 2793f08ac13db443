"""The rules of ``npudsl check``, one per module, each with a stable code (see docs/check.md)."""

from __future__ import annotations

from codegen.check.rules import (
    core_range,
    core_sum,
    default_nested,
    dotted_counts,
    event_cycle,
    event_streams,
    ge_event_runs,
    guard_root,
    no_call_site,
    unbound_call,
    undefined_attribute,
    unjoined_stream,
    unknown_attribute,
    unknown_event,
    unlimited_stream,
    unresolved_receiver,
    unsynced_stream,
    unused_record,
)
from codegen.check.rules.base import Context, Finding, Rule

__all__ = ["RULES", "Context", "Finding", "Rule"]

RULES: tuple[Rule, ...] = (
    *(
        module.RULE
        for module in (
            unknown_event,
            event_streams,
            event_cycle,
            guard_root,
            unknown_attribute,
            undefined_attribute,
            core_range,
            core_sum,
            dotted_counts,
            unbound_call,
            no_call_site,
            default_nested,
            unused_record,
            unsynced_stream,
            unlimited_stream,
            unresolved_receiver,
            unjoined_stream,
            ge_event_runs,
        )
    ),
    unknown_event.SHARED_RULE,
)
