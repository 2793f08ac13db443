"""NPD506: manual side streams that never wait for anything."""

from torch import nn

from npudsl import after, on_stream, records


class Block(nn.Module):
    @on_stream("copy", sync="manual")  # W: NPD506@6
    @records("copied")
    def copy(self, x):
        return x.clone()

    @on_stream("copy", sync="manual")
    def copy_more(self, x):
        return x.clone()

    @after("copied")
    def use(self, x):
        return x


@on_stream("loose", sync="manual")  # W: NPD506@2
def loose(x):
    return x
