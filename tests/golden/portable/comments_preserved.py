# A header comment stays where it is.
import torch
from npudsl import runtime
from torch import nn


class Commented(nn.Module):
    # Above the decorators.
    # Between decorators and def.
    def branch(self, x):  # trailing on def
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0):
            runtime.record_stream(x, "side")
            # first line of the body
            y = x + 1  # trailing on a statement

            # after a blank line
            runtime.record_stream(y, caller_stream)
            return y  # trailing on return

    @torch.no_grad()
    # Above a decorator that goes, after one that stays.
    # on the decorator's line
    def after_kept(self, x):
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0):
            runtime.record_stream(x, "side")
            out = x * 2
            runtime.record_stream(out, caller_stream)
            return out
