"""NPD203: functions that wait for each other's events."""

from torch import nn

from npudsl import after, on_stream, records


class Pair(nn.Module):
    @on_stream("a", sync="manual")
    @after("e1")  # E: NPD203@6
    @records("e2")
    def first(self, x):
        return x

    @on_stream("b", sync="manual")
    @after("e2")
    @records("e1")
    def second(self, x):
        return x


class Selfish(nn.Module):
    @on_stream("c", sync="manual")
    @records("mine")
    @after("mine")  # E: NPD203@6
    def itself(self, x):
        return x


class Ring(nn.Module):
    @on_stream("r1", sync="manual")
    @after("z")  # E: NPD203@6
    @records("x")
    def one(self, x):
        return x

    @on_stream("r2", sync="manual")
    @after("x")
    @records("y")
    def two(self, x):
        return x

    @on_stream("r3", sync="manual")
    @after("y")
    @records("z")
    def three(self, x):
        return x
