"""Which arguments ``torch``'s own functions write in place through slots their ATen schemas leave plain.

``torch.batch_norm(h, None, None, rm, rv, True, 0.1, 1e-5, False)`` updates ``rm`` and ``rv`` in place, yet its schema,
``batch_norm(Tensor input, ..., Tensor? running_mean, Tensor? running_var, bool training, ...) -> Tensor``, marks no
argument ``Tensor(a!)``, and neither does that of ``native_batch_norm``, the kernel it reaches (torch added
``_native_batch_norm_legit`` and ``_batch_norm_with_update``, whose schemas mark the running stats, beside them and
left these as they were). So the schema alone cannot say what such a call writes: at table-build time each public
function of ``torch`` (``torch.<name>``, its ATen op's overloads but the ``out`` ones) whose schema marks no argument
written is run on small CPU tensors (``functional_samples.py``: every ``Tensor`` and ``Tensor?`` given a float tensor,
each ``bool`` True, a required ``float`` 0.5 and ``int`` 1, the others at their defaults; an overload with another
required argument is not run), and an argument whose bytes change is written; taking a bool (False) or an optional
tensor (None) away from a run that wrote tells the write's guards (``functional_probe.Runs.writes``): ``training``
for ``batch_norm`` and ``native_batch_norm``, ``use_input_stats`` for ``instance_norm``, none for
``batch_norm_update_stats``. Composites and kernels are run alike: the effect is what counts.

Not run, and why none is needed: an op whose schema marks a written slot is held to its schema
(``schema.py``, ``aten_overloads.py``), as functionalization holds it; ``torch``'s private functions
(``torch._batch_norm_impl_index``) are its own internals, which model code reaches through the public ones. An op
with no CPU kernel (``cudnn_batch_norm``, ``batch_norm_gather_stats_with_counts``) cannot be run on the CPU wheel and
keeps its schema's answer. ``aten_kernel_writes_build.py`` writes the rows into ``aten_kernel_writes_table.py``;
``aten_kernel_writes.py`` reads them for ``foreign_writes.py``.
"""

from __future__ import annotations

from typing import Any

from codegen.lower.flow.aten_probe import python_name, schema_signature
from codegen.lower.flow.functional_kinds import Kinds
from codegen.lower.flow.functional_probe import Runs
from codegen.lower.flow.functional_samples import sample_with

__all__ = ["KernelWrites", "kernel_writes_found"]

KernelWrites = dict[str, tuple[str, dict[str, set[frozenset[str]]]]]  # name -> (its parameters named, writes)
_TENSORS = ("Tensor", "Optional[Tensor]")


def kernel_writes_found() -> KernelWrites:
    """Each public function of ``torch`` whose run writes an argument its schema leaves plain: the parameters its
    row names (``running_mean@3 running_var@4 training@5``) and, per written argument, the sets of guards."""
    import torch

    found: KernelWrites = {}
    for name, schemas in sorted(_unmarked_ops().items()):
        for schema in schemas:
            kinds = _kinds(schema)
            sample = sample_with(getattr(torch, name), kinds) if kinds is not None else None
            if sample is not None:
                writes = Runs(sample).writes()
                if writes:
                    found[name] = (schema_signature(schema, writes), writes)
                break
    return found


def _unmarked_ops() -> dict[str, list[Any]]:
    """The public functions of ``torch`` with their ATen overloads (``out`` ones aside) whose schemas mark no argument
    written, by name, the overload without a name first."""
    import torch

    found: dict[str, list[Any]] = {}
    for schema in torch._C._jit_get_all_schemas():
        namespace, _, name = schema.name.partition("::")
        if namespace == "aten" and not name.startswith("_") and hasattr(torch, name):
            if not schema.overload_name.endswith("out") and not any(_marked(a) for a in schema.arguments):
                found.setdefault(name, []).append(schema)
    return {name: sorted(schemas, key=lambda s: s.overload_name) for name, schemas in found.items()}


def _marked(argument: Any) -> bool:
    return argument.alias_info is not None and argument.alias_info.is_write


def _kinds(schema: Any) -> Kinds | None:
    """Every tensor parameter, optional ones too (they may be taken away: None), each bool (True, taken: False),
    the required numbers; None where another required argument has no value to be made."""
    tensors: list[str] = []
    taken: dict[str, Any] = {}
    fixed: dict[str, Any] = {}
    for argument in schema.arguments:
        name, kind, required = python_name(argument.name), str(argument.type), not argument.has_default_value()
        if kind in _TENSORS:
            tensors.append(name)
            taken.update({name: None} if kind != "Tensor" else {})
        elif kind == "bool":
            fixed[name], taken[name] = True, False
        elif kind in ("float", "int") and required:
            fixed[name] = 0.5 if kind == "float" else 1
        elif required:
            return None
    return Kinds(tensors, taken, fixed) if tensors else None
