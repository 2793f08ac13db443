"""Fork and join, defined once: what a call on another stream waits for, and what waits for it.

CONTRACT section 2, as the steps of one call of a stream function with automatic
sync, between the caller's stream and the callee's (side) stream:

1. fork: the caller's stream records ``<edge>.fork``, then the body's stream
   waits for it, so the body starts after all the work the caller issued
   before the call;
2. the body runs on its stream (:func:`forked` enters it with ``switch``);
3. the body's stream records ``<edge>.join`` when the body is done;
4. join: the caller's stream waits for ``<edge>.join`` just before the first
   statement that uses the call's result, at the latest before the caller
   returns (:func:`join_point`); where the uses cannot be seen (code run
   untransformed), right after the call.

``<edge>`` names the call's function (``<module>.<class>.<name>`` in generated
code and in the eager runtime, a moved unit's label in suggest's prediction).
The eager runtime (:mod:`npudsl.runtime.eager`) and suggest's simulator
(:mod:`npudsl.suggest.simulate`) run these steps through an :class:`Issuer` of
their own; the generator spells the same events (``codegen.index.index`` names a
stream function's two events after :data:`ROLES`). Pure Python: ``check`` and
``transform`` may import it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Protocol, TypeVar

__all__ = ["FORK", "JOIN", "ROLES", "Issuer", "event", "forked", "join", "join_point"]

T = TypeVar("T")
FORK, JOIN = "fork", "join"
ROLES = (FORK, JOIN)  # the two events of a call, in the order they are recorded


class Issuer(Protocol):
    """Who runs the steps: records and waits on whichever stream it is on now."""

    def record(self, event: str) -> None: ...

    def wait(self, event: str) -> None: ...


def event(edge: str, role: str) -> str:
    """The tag of a call's fork or join event: ``<edge>.fork``, ``<edge>.join``."""
    assert role in ROLES, role
    return f"{edge}.{role}"


@contextlib.contextmanager
def forked(issuer: Issuer, edge: str, switch: contextlib.AbstractContextManager[object]) -> Iterator[None]:
    """Steps 1 to 3 around the body (the ``with`` block): fork on the caller's stream, ``switch`` to the body's
    stream, wait for the fork, run the body, record the join. The caller's wait is :func:`join`'s."""
    issuer.record(event(edge, FORK))
    with switch:
        issuer.wait(event(edge, FORK))
        yield
        issuer.record(event(edge, JOIN))


def join(issuer: Issuer, edge: str) -> None:
    """Step 4, on the caller's stream, at :func:`join_point`."""
    issuer.wait(event(edge, JOIN))


def join_point(uses: Iterable[int], end: T) -> int | T:
    """Where the caller waits: at the first of ``uses`` (positions of the statements or ops that read the call's
    result), else at ``end`` (the caller's return)."""
    return min(uses, default=end)
