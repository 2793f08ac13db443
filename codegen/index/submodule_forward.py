"""Which ``forward`` a submodule call ``self.<attr>(...)`` runs, for the readers of what a call surely reads.

``used_calls.py`` follows an argument into the function a call reaches; for a submodule, its class's ``forward``.
The index's submodules say which class where ``__init__`` of the caller's class (or of a base in its module) makes
it; where they do not, the run may still know: a base in another module of the run makes it
(``class_chain.forward_of``: vllm-ascend's DSV4 indexer reaches ``self.compressor`` assigned by ``IndexerWeights`` in
``weights.py``), or a base builds it by calling a factory that the class's ``__init__`` hands it
(``factory_submodules.py``: ``lambda s: DeepseekV4Indexer(s, multistream)``). Anything else is unknown.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_chain import forward_of, home_of
from codegen.index.factory_submodules import factory_class

__all__ = ["submodule_forward"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def submodule_forward(
    index: object, module: str, owner: str, attr: str
) -> tuple[str, str, ast.Module, _Function] | None:
    """(module, class, the module's tree, the method) of the ``forward`` ``self.<attr>(...)`` runs in a method of
    class ``owner`` of ``module``, where the index's submodules of the class lack ``attr`` (None: not known, or not
    held by the run)."""
    made = factory_class(index, module, owner, attr)
    home = home_of(index, module, made) if made is not None else None
    found = (home[0], f"{home[1]}.forward") if home is not None else forward_of(index, module, owner, attr)
    if found is None or not found[0]:
        return None
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    tree = tree_of(found[0]) if tree_of is not None else None
    fn = scan.functions_by_qualname(tree).get(found[1]) if tree is not None else None
    if tree is None or fn is None or not fn.args.args:
        return None
    return found[0], found[1].rpartition(".")[0], tree, fn
