"""NPD110: decorators npudsl cannot tell with certainty to be its own (or not)."""

from typing import TYPE_CHECKING

from torch import nn

from npudsl import records
from helpers import *  # noqa: F403 (may bind records)
from npudsl import keep_output

if TYPE_CHECKING:
    from npudsl import on_stream
else:
    def on_stream(*args, **kwargs):
        return lambda fn: fn


class Unsure(nn.Module):
    @on_stream("side", sync="manual")  # E: NPD110@6
    def branch(self, x):
        return x

    @records("done")  # E: NPD110@6
    def done(self, x):
        return x

    @after("done")  # E: NPD110@6
    def waits(self, x):
        return x

    @keep_output  # E: NPD110@6
    def kept(self, x):
        return x


def keep_output(fn):  # the user's own, after npudsl's was used above
    return fn


@keep_output
def mine(x):
    return x
