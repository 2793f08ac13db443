"""Whether a call of a torch layer submodule (``self.proj(x)``, an ``nn.Linear``) reads its argument on the caller's
stream.

A captured graph frees a tensor after its last use, so a caller that hands a tensor to a submodule keeps it alive
there only where the submodule's ``forward`` surely runs an op on it (``used_calls.py`` asks). For a class of the
run its ``forward`` is read; for one of torch's, which of its ``forward``'s inputs it surely reads is read from
torch's own sources by ``torch_layer_reads_build.py`` (the table ``torch_layer_reads_table.py``): ``nn.Linear``,
``nn.LayerNorm`` and ``nn.RMSNorm`` read their input, ``nn.Identity`` returns it, ``nn.Flatten`` returns a view of
it, and ``nn.Dropout`` hands it to ``F.dropout`` with the module's mode (in eval: its input back, no kernel), so
none of those three is a read. A class outside ``torch.nn.modules``, or not in the table, reads nothing here.

A layer a base class in another module of the run assigns (``class DeepseekV4Indexer(IndexerWeights)``, whose
``__init__`` in ``weights.py`` makes ``self.weights_proj = nn.Linear(...)``) is read there, its class named as that
module imports it (:func:`submodule_layer`, through ``class_chain.origins``); where some base is the package's in a
module the run does not hold (a file transformed alone), that base may assign anything, and nothing is read.
"""

from __future__ import annotations

import functools

from codegen.index.class_chain import origins, unheld_base
from codegen.index.factory_made import made_by
from codegen.lower.flow.imported_writes import ModuleFunctions, module_functions

__all__ = ["layer_reads", "submodule_layer", "torch_layer"]


def torch_layer(functions: ModuleFunctions, dotted: str) -> str | None:
    """The table's class that ``dotted`` names in the module of ``functions`` (``nn.Linear``,
    ``torch.nn.Linear``, ``Linear`` imported from ``torch.nn``), if one."""
    root, *rest = dotted.split(".")
    bound = functions.binding(root)
    full = (*bound, *rest) if bound is not None else ()
    if len(full) < 3 or full[:2] != ("torch", "nn"):
        return None
    return full[-1] if full[-1] in _reads() else None


def submodule_layer(index: object, module: str, owner: str, attr: str) -> str | None:
    """The table's class of ``self.<attr>`` in a method of class ``owner`` of ``module`` (a run key), where the class
    or a base of the run assigns it, read in the module that names its class; None where a base is unheld."""
    found = origins(index, module, owner).get(attr)
    if found is None or unheld_base(index, module, owner):
        return None
    home, made = made_by(index, *found) or found  # a factory of the run makes it (``factory_made.py``)
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    tree = tree_of(home) if tree_of is not None else None
    return torch_layer(module_functions(index, home, tree), made) if tree is not None else None


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
