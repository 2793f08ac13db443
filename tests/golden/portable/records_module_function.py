"""Events of module-level functions are scoped to the module."""

import torch
from npudsl import runtime


def copy_out(x):
    caller_stream = runtime.current_stream()
    with runtime.stream("copy", 0):
        runtime.record_stream(x, "copy")
        out = x.clone()
        runtime.record_stream(out, caller_stream)
        runtime.record("records_module_function.copied")
        return out


def use(x):
    runtime.wait("records_module_function.copied")
    return x + 1
