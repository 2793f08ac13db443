"""The near misses of NPD101-NPD109: every argument shape and placement the contract allows."""
# ok: NPD101 NPD102 NPD103 NPD104 NPD105 NPD106 NPD107 NPD108 NPD109

from torch import nn

from npudsl import after, core_limit, keep_output, on_stream, records

TAG = "side.stream-1"


@on_stream("moe:shared")
@core_limit(4, 8)
@keep_output
class Shared(nn.Module):
    def forward(self, x):
        return x * 2


class Good(nn.Module):
    def __init__(self):
        super().__init__()
        self.multistream = True
        self.shared = Shared()

    @on_stream(TAG, 0, when="self.multistream", sync="manual")
    @after("ready", "moe:dispatched", when="self.multistream")
    @core_limit(8, 16)
    @keep_output(clone=True)
    def branch(self, x):
        return x + 1

    @records("ready", "moe:dispatched")
    @core_limit(aicore=8, vector=16, when="self.multistream")
    def forward(self, x):
        y = self.branch(x)
        z = self.shared(y)
        return x + z
