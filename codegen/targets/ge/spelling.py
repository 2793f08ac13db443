"""torchair GE (max-autotune): ``npu_stream_switch``, ``limit_core_num``, ``npu_wait_tensor``, and
``torchair.ops.record`` / ``torchair.ops.wait`` for the user's events.

GE orders a graph by its data dependencies and frees memory itself, so the automatic join and the
lifetime of tensors need no call; the fork is one control edge at each planned call
(``npu_wait_tensor(<input>, <caller's last value>)``, its result discarded, as in the seeds: rebinding
it would move later in-place writes onto the wait's output). A user event is a token
that lives for one run of the graph: ``@records("e")`` puts ``torchair.ops.record()`` in the module's
table once for each function of the event's scope that waits for it (or, when the body ends by making
a tensor it returns, that tensor, or the element of a returned tuple it makes last: waiting for it orders
on its producer, one call instead of two; or the tensors of a returned container, ``flow/ge_containers.py``:
such an event keeps lists of tensors in a table of its own, ``_EVENT_TOKEN_LISTS``; or, when the body's last
work writes a tensor in place, that tensor, ``flow/ge_written.py``),
and ``@after("e")`` takes its own token out and waits for it (no token: no record since its last wait,
and nothing to order). A token taken out never outlives the graph, so it is neither an extra graph output
nor a guard that recompiles the next call.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.frontend.ir import ModuleIR
from codegen.lower.plan import CurrentStream, EventRef, ForkToken, ForkWait, ModulePlan, Record, Step, Value, Wait
from codegen.targets.base import quote, returned_record
from codegen.targets.torchair import TorchairSpelling
from npudsl import codes
from npudsl._rules import is_shared_event

__all__ = ["GeSpelling", "diagnose"]

_TOKENS = """{name}: dict[str, TORCH.Tensor] = {}  # event tag -> what its last record orders on, until waited for
"""
_LISTS = """{name}: dict[str, list[TORCH.Tensor]] = {}  # event tag -> the tensors its last record orders on
"""
# a returned value -> the tensors to wait for (``wait`` takes at least one: an empty dict falls back to a token)
_LISTED = {"": "[{}]", "all": "[*{}]", "values": "[*{}.values()] or [TOKEN]"}


@attrs.define(eq=False)
class GeSpelling(TorchairSpelling):
    events_are_variables: bool = False

    def tokens(self, event: EventRef | None = None) -> str:
        """The table of tokens; an event some record of which orders on a container keeps lists of tensors."""
        if event is not None and event.listed:
            return self.helper("_EVENT_TOKEN_LISTS", _LISTS.replace("TORCH", self.use("torch")))
        return self.helper("_EVENT_TOKENS", _TOKENS.replace("TORCH", self.use("torch")))

    def step(self, step: Step) -> list[str]:
        if isinstance(step, (Record, Wait)) and (not step.event.user or step.event.shared):
            return []  # the automatic fork and join: GE follows the data; a shared event: see ``diagnose``
        if isinstance(step, Record):
            return self._record(step.event, self._written(step))
        if isinstance(step, Wait):
            table, key = self.tokens(step.event), quote(_key(step.event, step.event.waiter))
            popped = f"{table}.pop({key})" if step.event.listed else f"[{table}.pop({key})]"
            return [f"if {key} in {table}:\n    {self.torchair}.ops.wait({popped})"]
        if isinstance(step, ForkWait):
            return [f"{self.torchair}.scope.npu_wait_tensor({step.tensor}, {step.dependency})"]
        if isinstance(step, ForkToken):
            if step.wait:
                return [f"{self.torchair}.ops.wait([{', '.join((step.name, *step.also))}])"]
            return [f"{step.name} = {self.torchair}.ops.record()"]
        raise TypeError(step)

    def statements(self, step: Step, values: tuple[str, ...] = ()) -> list[str]:
        """A record that orders on one element of a returned tuple takes that element's name."""
        if isinstance(step, Record) and returned_record(step) and len(values) > 1:
            return self.record_returned(step, values[step.element])
        return super().statements(step, values)

    def record_returned(self, step: Record, value: str) -> list[str]:
        """The returned tensor is the token: ``wait([out])`` orders on its producer, the body's last work."""
        if step.event.shared or not step.event.user:
            return []
        if step.item is not None:  # an element of the tuple a call returned (``flow/ge_called.py``)
            value = f"{value}[{step.item}]"
        if step.event.listed:
            value = _LISTED[step.container].format(value).replace("TOKEN", f"{self.torchair}.ops.record()")
        return self._record(step.event, value)

    def _record(self, event: EventRef, token: str | None = None) -> list[str]:
        """One token per waiting function (none when nothing waits: the record would order nothing)."""
        if not event.waiters:
            return []
        table, token = self.tokens(event), token or self._made_token(event)
        keys = [quote(_key(event, waiter)) for waiter in event.waiters]
        if len(keys) == 1:
            return [f"{table}[{keys[0]}] = {token}"]
        return [f"{table}[{keys[0]}] = {token}", *(f"{table}[{key}] = {table}[{keys[0]}]" for key in keys[1:])]

    def _written(self, step: Record) -> str | None:
        """The tensor the body's last work writes in place (``flow/ge_written.py``), listed where the event is."""
        if not step.written:
            return None
        return _LISTED[""].format(step.written) if step.event.listed else step.written

    def _made_token(self, event: EventRef) -> str:
        made = f"{self.torchair}.ops.record()"
        return f"[{made}]" if event.listed else made

    def keep_alive(self, value: Value, stream: str | CurrentStream) -> list[str]:
        return []  # GE plans the memory of the whole graph; nothing is reused early


def _key(event: EventRef, waiter: str) -> str:
    """The table key of ``waiter``'s token: the event's tag, and the waiter's name when several wait."""
    return event.tag if len(event.waiters) < 2 else f"{event.tag}/{waiter.rsplit('.', 1)[-1]}"


def diagnose(ir: ModuleIR, plan: ModulePlan) -> Iterator[Diagnostic]:
    """A shared event orders nothing on GE yet (its tokens live in one module); GE still orders data."""
    for fn in ir.functions:
        for spec in (*fn.waits, *fn.records):
            for name in spec.names:
                if is_shared_event(name):
                    yield Diagnostic(
                        path=ir.path,
                        line=spec.loc.line,
                        col=spec.loc.col,
                        code=codes.GE_SHARED_EVENT,
                        message=f'the shared event "{name}" orders nothing on GE',
                        hint="GE still orders every data dependency; to order more, pass a "
                        "tensor between the two and let the data say it",
                        severity=Severity.WARNING,
                    )
