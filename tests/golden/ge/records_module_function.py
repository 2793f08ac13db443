"""Events of module-level functions are scoped to the module."""

import torch
import torchair

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> what its last record orders on, until waited for


def copy_out(x):
    out = x.clone()
    _EVENT_TOKENS["records_module_function.copied"] = torchair.ops.record()
    return out


def use(x):
    if "records_module_function.copied" in _EVENT_TOKENS:
        torchair.ops.wait([_EVENT_TOKENS.pop("records_module_function.copied")])
    return x + 1
