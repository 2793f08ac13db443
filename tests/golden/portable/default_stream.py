import torch
from npudsl import runtime
from torch import nn


class BackToMain(nn.Module):
    def side(self, x):
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0):
            runtime.record_stream(x, "side")
            out = x * 2
            runtime.record_stream(out, caller_stream)
            runtime.record("default_stream.BackToMain.side_done")
            return out

    def main(self, x):
        with runtime.stream("default", 0):
            runtime.wait("default_stream.BackToMain.side_done")
            return x + 1
