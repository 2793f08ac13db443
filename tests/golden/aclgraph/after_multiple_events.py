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
_LEFT_DONE = _tagged_event(f"{__name__}.Fan.left_done")
_RIGHT_DONE = _tagged_event(f"{__name__}.Fan.right_done")
_BOTH_READ = _tagged_event(f"{__name__}.Fan.both_read")
_MERGED = _tagged_event(f"{__name__}.Fan.merged")


class Fan(nn.Module):
    def left(self, x):
        out = x * 2
        torch.ops.air.tagged_event_record(_LEFT_DONE)
        return out

    def right(self, x):
        out = x * 3
        torch.ops.air.tagged_event_record(_RIGHT_DONE)
        return out

    def merge(self, left, right):
        torch.ops.air.tagged_event_wait(_LEFT_DONE)
        torch.ops.air.tagged_event_wait(_RIGHT_DONE)
        out = left + right
        torch.ops.air.tagged_event_record(_BOTH_READ)
        torch.ops.air.tagged_event_record(_MERGED)
        return out
