"""Events of module-level functions are scoped to the module."""

import torch

from npudsl import after, on_stream, records


@on_stream("copy", sync="manual")
@records("copied")
def copy_out(x):
    return x.clone()


@after("copied")
def use(x):
    return x + 1
