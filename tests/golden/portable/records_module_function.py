"""Events of module-level functions are scoped to the module."""

import torch
from npudsl import runtime


def copy_out(x):
    out = x.clone()
    runtime.record("records_module_function.copied")
    return out


def use(x):
    runtime.wait("records_module_function.copied")
    return x + 1
