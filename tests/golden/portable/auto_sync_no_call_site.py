import torch
from torch import nn
from npudsl import runtime


class Lonely(nn.Module):
    def simple(self, x):
        runtime.record("auto_sync_no_call_site.Lonely.simple.fork")
        with runtime.stream("side", 0):
            runtime.wait("auto_sync_no_call_site.Lonely.simple.fork")
            runtime.record_stream(x, "side")
            y = x + 1
            out = y * 2
            runtime.record("auto_sync_no_call_site.Lonely.simple.join")
        runtime.wait("auto_sync_no_call_site.Lonely.simple.join")
        return out

    def branching(self, x):
        runtime.record("auto_sync_no_call_site.Lonely.branching.fork")
        try:
            with runtime.stream("side", 0):
                runtime.wait("auto_sync_no_call_site.Lonely.branching.fork")
                runtime.record_stream(x, "side")
                if x.sum() > 0:
                    runtime.record("auto_sync_no_call_site.Lonely.branching.join")
                    return x
                out = -x
                runtime.record("auto_sync_no_call_site.Lonely.branching.join")
                return out
        finally:
            runtime.wait("auto_sync_no_call_site.Lonely.branching.join")
