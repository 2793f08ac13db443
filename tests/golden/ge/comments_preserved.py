# A header comment stays where it is.
import torch
from torch import nn


class Commented(nn.Module):
    # Above the decorators.
    # Between decorators and def.
    def branch(self, x):  # trailing on def
        # first line of the body
        y = x + 1  # trailing on a statement

        # after a blank line
        return y  # trailing on return

    @torch.no_grad()
    # Above a decorator that goes, after one that stays.
    # on the decorator's line
    def after_kept(self, x):
        return x * 2
