"""Which arguments the public functions of ``torch`` write in place through slots their ATen schemas
leave plain (written by ``aten_kernel_writes_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["KERNEL_WRITES"]

# function -> the parameters named here (``@``: the position, none by keyword only; ``=``: the default is None or
# False) | each parameter its kernel writes in place, with ``:`` and the parameters that must be given (not None,
# not False)
KERNEL_WRITES: dict[str, str] = {
    "batch_norm": "running_mean@3 running_var@4 training@5 | running_mean:training running_var:training",
    "batch_norm_update_stats": "running_mean@1 running_var@2 | running_mean running_var",
    "instance_norm": "running_mean@3 running_var@4 use_input_stats@5 | running_mean:use_input_stats running_var:use_input_stats",
    "native_batch_norm": "running_mean@3 running_var@4 training@5 | running_mean:training running_var:training",
}
