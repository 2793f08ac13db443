import torch
import torchair
from torch import nn


def _tagged_event(tag: str) -> str:
    """``tag``, with torchair's event made for it unless this process has one already."""
    try:
        torchair.ops.npu_create_tagged_event(tag=tag)
    except ValueError:  # made already: a reload, or another module that names the same shared event
        pass
    return tag


# torchair's tagged events, made once per process and named by tag.
_GO = _tagged_event(f"{__name__}.Ordered.go")
_DONE = _tagged_event(f"{__name__}.Ordered.done")


class Ordered(nn.Module):
    def start(self, x):
        out = x + 1
        torch.ops.air.tagged_event_record(_GO)
        return out

    def work(self, x):
        with torchair.scope.limit_core_num(4, 8):
            torch.ops.air.tagged_event_wait(_GO)
            out = x * 2
            torch.ops.air.tagged_event_record(_DONE)
            return out

    def finish(self, y):
        torch.ops.air.tagged_event_wait(_DONE)
        return y - 1
