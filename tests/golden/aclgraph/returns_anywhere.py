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
_FINISHED = _tagged_event(f"{__name__}.Early.finished")
_LOGGED = _tagged_event(f"{__name__}.Early.logged")


class Early(nn.Module):
    def route(self, x, skip):
        if skip:
            torch.ops.air.tagged_event_record(_FINISHED)
            return x
        for _ in range(2):
            if x.sum() > 0:
                out = x * 2
                torch.ops.air.tagged_event_record(_FINISHED)
                return out

        def helper(v):
            return v + 1  # a nested function's return is its own

        x = helper(x)
        out_1 = torch.relu(x)
        torch.ops.air.tagged_event_record(_FINISHED)
        return out_1

    def log(self, x):
        print(x.shape)
        torch.ops.air.tagged_event_record(_LOGGED)
