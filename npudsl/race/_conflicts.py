"""The ordering rule: accesses to the same memory on different streams, one of them a write.

Program order says which value each access means to see. So, for every memory root
(an allocation, with all its views and in-place results):

- read after write: a read on stream B must happen after the latest write before it
  (the producer, or an in-place op) when that write ran on A != B;
- write after read: an in-place write on A must happen after every read since the
  previous write that ran on B != A, or it may change what that read sees;
- write after write: two writes on different streams must be ordered.

"Happens after" is the vector-clock order of :class:`~npudsl.race._timeline.Timeline`.
"""

from __future__ import annotations

import torch.fx

from npudsl.race._access import Access, accesses
from npudsl.race._names import describe_memory
from npudsl.race._source import location
from npudsl.race._timeline import Timeline

__all__ = ["unordered_accesses"]


def _verb(access: Access) -> str:
    return "made" if access.node is access.memory else "written in place"


def _role(access: Access) -> str:
    if not access.write:
        return "read"
    return "producer" if access.node is access.memory else "write"


def _named(first: Access, second: Access) -> str:
    """The value as the reading side names it (the second access when both write)."""
    named = first if not first.write else second
    return describe_memory(named.memory, named.through, named.node)


def _message(first: Access, second: Access, timeline: Timeline) -> str:
    one, two = timeline.stamps[first.node].stream, timeline.stamps[second.node].stream
    at_first, at_second = location(first.node), location(second.node)
    if first.write and not second.write:
        what = f"{_verb(first)} on stream {one!r} at {at_first} is read on stream {two!r} at {at_second}"
    elif not first.write:
        what = f"is read on stream {one!r} at {at_first} and written in place on stream {two!r} at {at_second}"
    else:
        what = (
            f"is {_verb(first)} on stream {one!r} at {at_first} and written in place on stream {two!r} at {at_second}"
        )
    risk = " (the write may land before the read is done)" if not first.write else ""
    return (
        f"tensor {_named(first, second)} {what} with no wait in between{risk}: record an event on {one!r} "
        f"after the {_role(first)} and wait for it on {two!r} before the {_role(second)}"
    )


def _unordered(first: Access | None, second: Access, timeline: Timeline) -> bool:
    if first is None or first.node is second.node:
        return False
    streams_differ = timeline.stamps[first.node].stream != timeline.stamps[second.node].stream
    return streams_differ and not timeline.happens_before(first.node, second.node)


def unordered_accesses(graph: torch.fx.Graph, timeline: Timeline) -> list[str]:
    """One message per pair of conflicting accesses that no wait orders."""
    last_write: dict[torch.fx.Node, Access] = {}
    reads: dict[torch.fx.Node, list[Access]] = {}
    found: dict[tuple[torch.fx.Node, str, str], str] = {}  # several ops of one line: one message
    for access in accesses(graph):
        if access.write:
            earlier = [last_write.get(access.memory), *reads.pop(access.memory, [])]
            last_write[access.memory] = access
        else:
            earlier = [last_write.get(access.memory)]
            reads.setdefault(access.memory, []).append(access)
        for first in earlier:
            if first is not None and _unordered(first, access, timeline):
                key = (access.memory, location(first.node), location(access.node))
                found.setdefault(key, _message(first, access, timeline))
    return list(found.values())
