import torch
from npudsl import runtime
from torch import nn


class Early(nn.Module):
    def route(self, x, skip):
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0):
            runtime.record_stream(x, "side")
            runtime.record_stream(skip, "side")
            if skip:
                runtime.record_stream(x, caller_stream)
                runtime.record("returns_anywhere.Early.finished")
                return x
            for _ in range(2):
                if x.sum() > 0:
                    out = x * 2
                    runtime.record_stream(out, caller_stream)
                    runtime.record("returns_anywhere.Early.finished")
                    return out

            def helper(v):
                return v + 1  # a nested function's return is its own

            x = helper(x)
            out_1 = torch.relu(x)
            runtime.record_stream(out_1, caller_stream)
            runtime.record("returns_anywhere.Early.finished")
            return out_1

    def log(self, x):
        print(x.shape)
        runtime.record("returns_anywhere.Early.logged")
