"""Which arguments ``torch``'s own functions may return as they came, though their ATen schemas say they make a new
tensor.

``torch.dropout(x, 0.1, train=False)`` returns ``x`` itself: ATen's ``dropout`` is a composite of other ops (its
kernel is registered for ``CompositeImplicitAutograd``), and in eval, or with ``p`` 0, it runs none of them and hands
its input back, though its schema, ``dropout(Tensor input, float p, bool train) -> Tensor``, says nothing of it; so
does ``torch.conj_physical(x)`` where ``x`` is real. A kernel of any other key is held to its schema (a result the
schema does not alias is new memory), so only the overloads of ``torch``'s functions that are composites and return
one plain ``Tensor`` are run, at table-build time, on small tensors made from their schemas' types:
``Tensor`` a float tensor, ``Tensor?`` None, ``bool`` True, ``float`` its default or 0.5, ``int`` its default or 1;
an overload with another required argument is not run. As ``functional_probe.py`` runs ``torch.nn.functional``, an
argument a run returns with no op on it is handed back: with no guard where the run with every parameter given does,
else with each bool or float whose taking away (False, 0.0) does it. ``torch_functional_build.py`` writes the rows
into the table's ``TORCH_PASSED``; ``torch_functional.handed_back`` reads them for ``torch.<name>``.
"""

from __future__ import annotations

from typing import Any

from codegen.lower.flow.functional_kinds import Kinds
from codegen.lower.flow.functional_probe import Runs
from codegen.lower.flow.functional_samples import sample_with

__all__ = ["AtenPasses", "aten_passes", "python_name", "schema_signature"]

AtenPasses = dict[str, tuple[str, dict[str, set[frozenset[str]]]]]  # name -> (its parameters named, passes)
_PLAIN = "Tensor"


def aten_passes() -> AtenPasses:
    """Each composite op of ``torch`` a run hands an argument back by: the parameters its row names (``input@0
    p@1 train@2``) and, per argument handed back, the sets of parameters whose taking away does it."""
    import torch

    found: AtenPasses = {}
    for name, schemas in sorted(_composite_ops().items()):
        for schema in schemas:
            kinds = _kinds(schema)
            sample = sample_with(getattr(torch, name), kinds) if kinds is not None else None
            if sample is not None:
                passes = Runs(sample).passes()
                if passes:
                    found[name] = (schema_signature(schema, passes), passes)
                break
    return found


def _composite_ops() -> dict[str, list[Any]]:
    """The public functions of ``torch`` with their ATen overloads that return one plain tensor and are composites
    (``out=`` ones aside), by name, the overload without a name first."""
    import torch

    found: dict[str, list[Any]] = {}
    for schema in torch._C._jit_get_all_schemas():
        namespace, _, name = schema.name.partition("::")
        if namespace == "aten" and not name.startswith("_") and hasattr(torch, name):
            if not schema.overload_name.endswith("out"):
                found.setdefault(name, []).append(schema)
    kept = {name: [s for s in schemas if _plain(s) and _composite(s)] for name, schemas in found.items()}
    return {name: sorted(schemas, key=lambda s: s.overload_name) for name, schemas in kept.items() if schemas}


def _plain(schema: Any) -> bool:
    """One result, a tensor no alias annotation ties to an argument, and no argument written."""
    returns, arguments = schema.returns, schema.arguments
    plain = len(returns) == 1 and str(returns[0].type) == _PLAIN and returns[0].alias_info is None
    return plain and all(a.alias_info is None for a in arguments)


def _composite(schema: Any) -> bool:
    import torch

    overload = f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name
    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(overload, "CompositeImplicitAutograd"))
    except RuntimeError:  # a schema of the JIT's own with no operator registered (``as_tensor.bool``)
        return False


def _kinds(schema: Any) -> Kinds | None:
    """The tensor parameters (by their Python names: ATen's ``self`` is ``input``), what each bool and float may be
    taken away to, and the given values of the others (None: a required argument no value can be made for)."""
    tensors: list[str] = []
    taken: dict[str, Any] = {}
    fixed: dict[str, Any] = {}
    for argument in schema.arguments:
        name, kind, default = python_name(argument.name), str(argument.type), _default(argument)
        if kind == _PLAIN:
            tensors.append(name)
        elif kind == "bool":
            fixed[name], taken[name] = True, False
        elif kind == "float":
            fixed[name], taken[name] = default if isinstance(default, float) and default else 0.5, 0.0
        elif kind == "int" and not argument.has_default_value():
            fixed[name] = 1
        elif kind == "Optional[Tensor]" and not argument.has_default_value():
            fixed[name] = None
        elif not argument.has_default_value():
            return None
    return Kinds(tensors, taken, fixed) if tensors else None


def python_name(name: str) -> str:
    return "input" if name == "self" else name


def _default(argument: Any) -> Any:
    return argument.default_value if argument.has_default_value() else None


def schema_signature(schema: Any, passes: dict[str, set[frozenset[str]]]) -> str:
    """``input@0 p@1 train@2``: each parameter the passes name, at its position (``=``: a falsy default)."""
    named = {*passes, *(g for guards in passes.values() for gs in guards for g in gs)}
    words = []
    for position, argument in enumerate(schema.arguments):
        name = python_name(argument.name)
        if name in named:
            at = "" if argument.kwarg_only else f"@{position}"
            falsy = argument.has_default_value() and argument.default_value in (None, False)
            words.append(f"{name}{at}" + "=" * falsy)
    return " ".join(sorted(words))
