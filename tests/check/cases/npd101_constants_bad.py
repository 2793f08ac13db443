"""NPD101: a name as a decorator argument must be a module-level name bound once to a literal, before its use."""

from torch import nn

from config import IMPORTED  # noqa: F401

from npudsl import core_limit, keep_output, on_stream

TWICE = "side"
TWICE = "main"
COMPUTED = "side".upper()
PAIR = ("a", "b")
if True:
    UNDER_IF = "side"


class Consts(nn.Module):
    IN_CLASS = "side"

    @on_stream(TWICE)  # E: NPD101@16
    def twice(self, x):
        return x

    @on_stream(COMPUTED)  # E: NPD101@16
    def computed(self, x):
        return x

    @on_stream(PAIR)  # E: NPD101@16
    def pair(self, x):
        return x

    @on_stream(UNDER_IF)  # E: NPD101@16
    def under_if(self, x):
        return x

    @on_stream(IN_CLASS)  # E: NPD101@16
    def in_class(self, x):
        return x

    @on_stream(LATER)  # E: NPD101@16
    def later(self, x):
        return x

    @on_stream(NOWHERE)  # E: NPD101@16
    def nowhere(self, x):
        return x

    @on_stream(IMPORTED)  # E: NPD101@16
    def imported(self, x):
        return x

    @keep_output(clone=CLONE)  # E: NPD101@24
    def bad_keyword(self, x):
        return x

    @core_limit(aicore=TWICE, vector=8)  # E: NPD101@24
    def bad_count(self, x):
        return x


LATER = "side"
CLONE = True
