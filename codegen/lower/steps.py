"""The steps of a plan: what a target spells at one place of the code (a record, a wait, a switch, a keep-alive).

Each step is a frozen value naming what it acts on (an event, a stream, values) and the condition it runs
under (:class:`Cond`, read at run time); targets spell each kind in their own API (``codegen/targets``).
"""

from __future__ import annotations

import attrs
from attrs import validators as v

from codegen.frontend.signature import Tensorness

__all__ = [
    "Assign",
    "Clone",
    "Cond",
    "Context",
    "CurrentStream",
    "EventRef",
    "ForkToken",
    "ForkWait",
    "KeepAlive",
    "LimitCores",
    "Record",
    "Step",
    "SwitchStream",
    "Value",
    "Wait",
]

_TERM = r"\S(.*\S)?"  # a dotted name, or a test of fixed values read again (``codegen/lower/flow/fixed_tests.py``)


@attrs.frozen
class Cond:
    """A condition read at run time: every term (a dotted name, or a test of fixed values) holds."""

    terms: tuple[str, ...] = attrs.field(validator=[v.min_len(1), v.deep_iterable(v.matches_re(_TERM))])

    @property
    def text(self) -> str:
        alone = len(self.terms) == 1
        return " and ".join(t if alone or " or " not in t else f"({t})" for t in self.terms)

    @staticmethod
    def of(*parts: Cond | str | None) -> Cond | None:
        """The conjunction of ``parts`` (None and repeats dropped); None when nothing is left."""
        terms: list[str] = []
        for part in parts:
            for term in part.terms if isinstance(part, Cond) else (part,) if part else ():
                if term not in terms:
                    terms.append(term)
        return Cond(tuple(terms)) if terms else None


@attrs.frozen(kw_only=True)
class EventRef:
    var: str  # the module-level variable that holds the event
    tag: str  # its process-global tag
    source: str | None = None  # module to import it from, when another module defines it
    user: bool = False  # named by @after/@records (not a fork or join of the automatic synchronization)
    name: str = ""  # the user's event name, for user events
    waiters: tuple[str, ...] = ()  # user events: the functions of its scope that wait for it (qualnames)
    waiter: str = ""  # on a wait of a user event: the function that waits
    shared: bool = False  # a shared event (``"ns:name"``): one event for every class and file that names it
    scope: str = ""  # in a module's events: the tag after that module's name (``Class.name``), made at import
    listed: bool = False  # GE: a record of this user event orders on a returned container's tensors (a list)
    pick: tuple[EventRef, ...] = ()  # one of these events, by ``index`` (a micro-batch's join: ``item_slots.py``)
    index: str = ""  # which of ``pick``: an expression of the caller, ``i % 2``


@attrs.frozen(kw_only=True)
class CurrentStream:
    """The stream the code runs on at this point: ``tag`` when its function is on stream ``tag`` and
    ``when`` holds, else the main stream (targets that name streams by tag need a static answer)."""

    tag: str = "default"
    when: Cond | None = None


@attrs.frozen(kw_only=True)
class Value:
    """A value to keep alive: a name, and whether it is surely a tensor (else walked and checked)."""

    name: str
    tensor: Tensorness = Tensorness.MAYBE


@attrs.frozen(kw_only=True)
class SwitchStream:
    tag: str
    priority: int
    when: Cond | None


@attrs.frozen(kw_only=True)
class LimitCores:
    aicore: int | str  # a count, or a dotted name read at call time
    vector: int | str
    when: Cond | None


@attrs.frozen(kw_only=True)
class Record:
    event: EventRef
    when: Cond | None
    returned: bool = False  # at a body's end: the body's last work makes a tensor it returns (GE orders on it)
    element: int = 0  # with ``returned``: which returned value that is (one of a returned tuple's)
    item: int | None = None  # with ``returned``: the token is this element of that value, a call's tuple (``out[2]``)
    container: str = ""  # with ``returned``: "all" / "values" when that value is a container of tensors
    written: str = ""  # GE: the tensor (as source) the body's last work writes in place, which the record orders on


@attrs.frozen(kw_only=True)
class Wait:
    event: EventRef
    when: Cond | None


@attrs.frozen(kw_only=True)
class KeepAlive:
    """``record_stream`` each value for the stream that reads it (no values named: the returned ones)."""

    stream: str | CurrentStream  # a tag, or the current stream
    when: Cond | None
    values: tuple[Value, ...] = ()


@attrs.frozen(kw_only=True)
class Clone:
    """Replace each returned tensor by a clone."""

    when: Cond | None


@attrs.frozen(kw_only=True)
class ForkWait:
    """GE: the consumers of ``tensor`` wait for the producer of ``dependency`` (one control edge)."""

    tensor: str
    dependency: str
    when: Cond | None


@attrs.frozen(kw_only=True)
class ForkToken:
    """GE: ``name = torchair.ops.record()`` on the caller's stream (``wait``: False), or, first thing on the side
    stream, ``torchair.ops.wait([name])`` (``wait``: True): the fork of a call with no certain tensor to order on."""

    name: str
    wait: bool
    when: Cond | None
    also: tuple[str, ...] = ()  # a wait: more tensors to wait for the producers of (``wait([cos, sin])``)


@attrs.frozen(kw_only=True)
class Assign:
    """``name = value``: a flag that says a call forked, or an argument evaluated once before a call."""

    name: str
    value: str
    when: Cond | None = None


Context = SwitchStream | LimitCores
Step = Record | Wait | KeepAlive | Clone | ForkWait | ForkToken | Assign
