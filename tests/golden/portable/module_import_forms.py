import torch
from npudsl import runtime
from torch import nn


class Aliased(nn.Module):
    def first(self, x):
        out = x + 1
        runtime.record("module_import_forms.Aliased.done")
        return out

    def second(self, x):
        out = x * 2
        out = runtime.clone(out)
        return out
