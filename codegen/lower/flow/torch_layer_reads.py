"""Whether a call of a torch layer submodule (``self.proj(x)``, an ``nn.Linear``) reads its argument on the caller's
stream.

A captured graph frees a tensor after its last use, so a caller that hands a tensor to a submodule keeps it alive
there only where the submodule's ``forward`` surely runs an op on it (``used_calls.py`` asks). For a class of the
run its ``forward`` is read; for one of torch's, which of its ``forward``'s inputs it surely reads is read from
torch's own sources by ``torch_layer_reads_build.py`` (the table ``torch_layer_reads_table.py``): ``nn.Linear``,
``nn.LayerNorm`` and ``nn.RMSNorm`` read their input, ``nn.Identity`` returns it, ``nn.Flatten`` returns a view of
it, and ``nn.Dropout`` hands it to ``F.dropout`` with the module's mode (in eval: its input back, no kernel), so
none of those three is a read. A class outside ``torch.nn.modules``, or not in the table, reads nothing here.
"""

from __future__ import annotations

import functools

from codegen.lower.flow.imported_writes import ModuleFunctions

__all__ = ["layer_reads", "torch_layer"]


def torch_layer(functions: ModuleFunctions, dotted: str) -> str | None:
    """The table's class that ``dotted`` names in the module of ``functions`` (``nn.Linear``,
    ``torch.nn.Linear``, ``Linear`` imported from ``torch.nn``), if one."""
    root, *rest = dotted.split(".")
    bound = functions.binding(root)
    full = (*bound, *rest) if bound is not None else ()
    if len(full) < 3 or full[:2] != ("torch", "nn"):
        return None
    return full[-1] if full[-1] in _reads() else None


def layer_reads(cls: str, slot: int | str) -> bool:
    """A call of a module of torch's class ``cls`` surely reads its argument ``slot`` (a position after the
    module itself, or a parameter's name) in an op."""
    params = _reads().get(cls)
    if params is None:
        return False
    read, names = params
    return (slot < len(names) and names[slot] in read) if isinstance(slot, int) else slot in read


@functools.cache
def _reads() -> dict[str, tuple[frozenset[str], tuple[str, ...]]]:
    """Each class: the parameters its ``forward`` surely reads, and all its parameters in order."""
    from codegen.lower.flow.torch_layer_reads_table import READS

    found = {}
    for cls, params in READS.items():
        names = tuple(p.strip("()") for p in params.split())
        found[cls] = (frozenset(p for p in params.split() if not p.startswith("(")), names)
    return found
