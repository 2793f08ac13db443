import torch
from torch import nn
from npudsl import runtime


class Aliased(nn.Module):
    def first(self, x):
        with runtime.stream("side", 0):
            out = x + 1
            runtime.record("module_import_forms.Aliased.done")
            return out

    def second(self, x):
        with runtime.stream("side", 0):
            out = x * 2
            out = out.clone()
            runtime.record_stream(out, "default")
            return out
