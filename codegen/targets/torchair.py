"""What aclgraph and GE spell alike: torchair's stream and core-limit scopes, clones, and tags of streams.

Shared by the two torchair targets (``aclgraph/``, ``ge/``), so neither target's folder imports the other's.
"""

from __future__ import annotations

import attrs

from codegen.lower.plan import Context, CurrentStream, LimitCores, Value
from codegen.targets.base import Spelling, is_tensor, quote
from codegen.targets.helpers import CLONE

__all__ = ["TorchairSpelling", "tag_text"]


def tag_text(stream: str | CurrentStream) -> str:
    """The tag of ``stream`` as torchair names it (``"default"`` is the main stream). Tags are static: the
    stream a callee was called on is taken to be the main one, and code in a side-stream function runs on
    that function's stream when its guard holds."""
    if isinstance(stream, CurrentStream):
        if stream.tag == "default" or stream.when is None:
            return quote(stream.tag)
        return f"{quote(stream.tag)} if {stream.when.text} else {quote('default')}"
    return quote(stream)


@attrs.define(eq=False)
class TorchairSpelling(Spelling):
    """What aclgraph and GE spell alike: the torchair scopes."""

    @property
    def torchair(self) -> str:
        return self.use("torchair")

    def context(self, context: Context) -> str | None:
        if isinstance(context, LimitCores):
            return f"{self.torchair}.scope.limit_core_num({context.aicore}, {context.vector})"
        if context.tag == "default":
            return None  # torchair switches to side streams only; the main stream is where the graph runs
        return f"{self.torchair}.scope.npu_stream_switch({quote(context.tag)}, {context.priority})"

    def clone(self, value: Value) -> str:
        if is_tensor(value):
            return f"{value.name}.clone()"
        torch = self.use("torch")
        return f"{self.helper('_clone', CLONE.replace('TORCH', torch))}({value.name})"
