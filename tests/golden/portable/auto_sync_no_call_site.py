import torch
from npudsl import runtime
from torch import nn


class Lonely(nn.Module):
    def simple(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        runtime.record("auto_sync_no_call_site.Lonely.simple.fork")
        with runtime.stream("side", 0):
            runtime.wait("auto_sync_no_call_site.Lonely.simple.fork")
            if join:
                runtime.record_stream(x, "side")
            y = x + 1
            out = y * 2
            if join:
                runtime.record_stream(out, caller_stream)
            runtime.record("auto_sync_no_call_site.Lonely.simple.join")
        if join:
            runtime.wait("auto_sync_no_call_site.Lonely.simple.join")
        return out

    def branching(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        runtime.record("auto_sync_no_call_site.Lonely.branching.fork")
        try:
            with runtime.stream("side", 0):
                runtime.wait("auto_sync_no_call_site.Lonely.branching.fork")
                if join:
                    runtime.record_stream(x, "side")
                if x.sum() > 0:
                    if join:
                        runtime.record_stream(x, caller_stream)
                    runtime.record("auto_sync_no_call_site.Lonely.branching.join")
                    return x
                out = -x
                if join:
                    runtime.record_stream(out, caller_stream)
                runtime.record("auto_sync_no_call_site.Lonely.branching.join")
                return out
        finally:
            if join:
                runtime.wait("auto_sync_no_call_site.Lonely.branching.join")
