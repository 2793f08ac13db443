"""What the ATen ops a run reaches do to the run's argument tensors: which they write, which they read.

A dispatch mode sees every ATen op a function of ``torch.nn.functional`` runs, with its schema: an argument whose
storage reaches a slot marked ``Tensor(a!)`` is written (``relu_``'s ``self``); one that reaches any slot of an op
that is no view (whose results carry no alias annotation) is read. ``F.dropout(x, training=False)`` reaches no op at
all: ATen's ``dropout`` hands ``x`` back as it came, so a run that returns ``x`` reads nothing of it
(``functional_samples.py`` compares the storages). Used at table-build time only (``torch_functional_build.py``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["recorder", "storage"]


def storage(tensor: Any) -> int:
    """The identity of the memory ``tensor`` views."""
    return int(tensor.untyped_storage()._cdata)


def recorder(storages: dict[int, str]) -> Any:
    """A dispatch mode noting, by name, which of ``storages`` its ops write (``written``) and read (``read``)."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Recorder(TorchDispatchMode):
        written: set[str]
        read: set[str]

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            schema = func._schema
            view = any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
            named = dict(zip((a.name for a in schema.arguments), args)) | kwargs
            for argument in schema.arguments:
                values = tree_flatten(named.get(argument.name))[0]
                held = {storages[k] for k in map(_storage_of, values) if k in storages}
                if argument.alias_info is not None and argument.alias_info.is_write:
                    self.written |= held
                elif not view:
                    self.read |= held
            return func(*args, **kwargs)

    made = Recorder()
    made.written, made.read = set(), set()
    return made


def _storage_of(value: Any) -> int | None:
    import torch

    return storage(value) if isinstance(value, torch.Tensor) else None
