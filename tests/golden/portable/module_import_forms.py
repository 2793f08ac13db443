import torch
from npudsl import runtime
from torch import nn


class Aliased(nn.Module):
    def first(self, x):
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0):
            runtime.record_stream(x, "side")
            out = x + 1
            runtime.record_stream(out, caller_stream)
            runtime.record("module_import_forms.Aliased.done")
            return out

    def second(self, x):
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0):
            runtime.record_stream(x, "side")
            out = x * 2
            out = runtime.clone(out)
            runtime.record_stream(out, caller_stream)
            return out
