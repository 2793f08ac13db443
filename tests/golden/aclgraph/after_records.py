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
_READY = _tagged_event(f"{__name__}.Pipeline.ready")


class Pipeline(nn.Module):
    def produce(self, x):
        out = x + 1
        torch.ops.air.tagged_event_record(_READY)
        return out

    def consume(self, y):
        torch.ops.air.tagged_event_wait(_READY)
        return y.sum()
