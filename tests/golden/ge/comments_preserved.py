# A header comment stays where it is.
import torch
from torch import nn
import torchair


class Commented(nn.Module):
    # Above the decorators.
    # Between decorators and def.
    def branch(self, x):  # trailing on def
        with torchair.scope.npu_stream_switch("side", 0):
            # first line of the body
            y = x + 1  # trailing on a statement

            # after a blank line
            return y  # trailing on return
