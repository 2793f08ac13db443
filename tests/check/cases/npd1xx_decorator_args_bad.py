"""NPD101-NPD109: decorator arguments the transformer cannot read, or decorators where they cannot go."""

from torch import nn

from npudsl import after, core_limit, keep_output, on_stream, records

TAG = "side"


class Bad(nn.Module):
    @on_stream(TAG.upper())  # E: NPD101@16
    def not_literal(self, x):
        return x

    @on_stream("bad tag")  # E: NPD102@16
    def bad_tag(self, x):
        return x

    @after("not-an-identifier")  # E: NPD103@12
    def bad_event(self, x):
        return x

    @keep_output(when="1abc")  # E: NPD104@23
    def bad_when(self, x):
        return x

    @core_limit(0, 8)  # E: NPD105@17
    def bad_cores(self, x):
        return x

    @on_stream("side", sync="later")  # E: NPD106@29
    def bad_sync(self, x):
        return x

    @core_limit(1, 2)
    @core_limit(1, 2)  # E: NPD107@6
    def twice(self, x):
        return x

    @records  # E: NPD109@6
    def no_events(self, x):
        return x

    @on_stream("side")  # E: NPD108@6
    async def asynchronous(self, x):
        return x
