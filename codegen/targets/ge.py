"""torchair GE (max-autotune): ``npu_stream_switch``, ``limit_core_num``, ``npu_wait_tensor``, and
``torchair.ops.record`` / ``torchair.ops.wait`` for the user's events.

GE orders a graph by its data dependencies and frees memory itself, so the automatic join and the
lifetime of tensors need no call; the fork is one control edge at each planned call
(``npu_wait_tensor(<input>, <caller's last value>)``, its result discarded, as in the seeds: rebinding
it would move later in-place writes onto the wait's output). A user event is a token:
``@records("e")`` keeps ``torchair.ops.record()`` in the module's table under the event's tag, and
``@after("e")`` waits for the token recorded last (a wait before any record orders nothing).
"""

from __future__ import annotations

import attrs

from codegen.hygiene import ModuleNames
from codegen.plan import CurrentStream, ForkWait, Record, Step, Value, Wait
from codegen.targets.aclgraph import TorchairSpelling
from codegen.targets.base import Local, Spelling, quote

__all__ = ["Ge"]

_TOKENS = '''{name}: dict[str, TORCH.Tensor] = {}  # event tag -> the token its last record made (torchair.ops.record)
'''


@attrs.define(eq=False)
class _Spelling(TorchairSpelling):
    events_are_variables: bool = False

    def tokens(self) -> str:
        return self.helper("_EVENT_TOKENS", _TOKENS.replace("TORCH", self.use("torch")))

    def step(self, step: Step) -> list[str]:
        if isinstance(step, (Record, Wait)) and not step.event.user:
            return []  # the automatic fork and join: GE follows the data
        if isinstance(step, Record):
            return [f"{self.tokens()}[{quote(step.event.tag)}] = {self.torchair}.ops.record()"]
        if isinstance(step, Wait):
            table, tag = self.tokens(), quote(step.event.tag)
            return [f"if {tag} in {table}:\n    {self.torchair}.ops.wait([{table}[{tag}]])"]
        if isinstance(step, ForkWait):
            return [f"{self.torchair}.scope.npu_wait_tensor({step.tensor}, {step.dependency})"]
        raise TypeError(step)

    def keep_alive(self, value: Value, stream: str | CurrentStream | Local) -> list[str]:
        return []  # GE plans the memory of the whole graph; nothing is reused early

    def stream_wait(self, step: object) -> list[str]:
        return []


@attrs.frozen
class Ge:
    name: str = "ge"
    event_sync: bool = False

    def spelling(self, names: ModuleNames) -> Spelling:
        return _Spelling(names=names)
