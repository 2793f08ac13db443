"""Which methods of torch's module classes write their module's parameters or buffers in place.

torch's classes are known without reading torch (``read_classes.py``), and most of their methods write nothing of
their module: ``nn.Linear``'s ``forward``, ``parameters()``, ``extra_repr()``. Some do: ``self.norm.
reset_running_stats()`` zeroes ``running_mean`` in place, ``self.proj.reset_parameters()`` refills ``weight``,
``self.to(...)``, ``load_state_dict`` and ``zero_grad`` copy into or clear every parameter, and a batch norm's
``forward`` counts its batches in place (``num_batches_tracked.add_(1)``). Which one does is read from torch's own
sources by ``torch_module_methods_build.py`` (the table ``torch_module_methods_table.py``): a pending call reading
such a module's state is joined before a call of a method that writes it (``unread_methods.py``). A method the
table's class and its bases do not define (an attribute holding a callable) is unknown: it may write too. A method
that runs what its module holds (``nn.Sequential``'s ``forward`` calls each child in turn) writes what those children
write: ``torch_method_runs_children`` says so, and the caller reads the children where the module is built
(``container_children.py``). A method that runs its object's own ``forward`` (``Module._call_impl``,
``_wrapped_call_impl``, ``_slow_forward``: ``torch_forward_runs.py``) is asked as ``forward`` is, and
``runs_forward`` tells a class of the run's ``self.sub._call_impl(x)`` from a method writing nothing. A class of
torch outside ``torch.nn.modules`` is not in the table (``torch_class`` answers None).
"""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING

from codegen.lower.flow.constructor_args import given_flag
from codegen.lower.flow.torch_module_sources import defining_class

if TYPE_CHECKING:  # ``imported_writes`` asks ``inherited_methods``, which asks this module
    from codegen.lower.flow.imported_writes import ModuleFunctions

__all__ = [
    "module_method",
    "runs_forward",
    "torch_class",
    "torch_method_runs_children",
    "torch_method_writes",
    "torch_method_writes_made",
]

_KINDS = ("", "w", "c", "f")  # the table's marks: writes nothing, writes, runs its children, runs its forward
_FORWARD = "forward"


def torch_class(functions: ModuleFunctions, dotted: str) -> str | None:
    """The table's class ``dotted`` names in the module of ``functions`` (``nn.Linear``, ``torch.nn.BatchNorm1d``,
    ``Linear`` imported from ``torch.nn``), if one."""
    root, *rest = dotted.split(".")
    bound = functions.binding(root)
    full = (*bound, *rest) if bound is not None else ()
    if len(full) < 3 or full[:2] != ("torch", "nn"):
        return None
    return full[-1] if full[-1] in _classes() else None


def torch_method_writes(cls: str, method: str) -> bool:
    """A call of ``method`` on an object of torch's module class ``cls`` (of the table) may write its state."""
    method = _called(cls, method)
    home = _defining(cls, method)
    return home is None or method in _classes()[home][2]


def torch_method_writes_made(cls: str, method: str, built: ast.Call | None) -> bool:
    """:func:`torch_method_writes` for an object made by the call ``built`` (None: not known): a method writing only
    where the constructor is given an argument (``nn.Embedding``'s ``forward``, its ``max_norm``) writes nothing
    where ``built`` gives it none, or a literal None or False (a class made by another ``__init__`` than the
    method's class, ``nn.LazyInstanceNorm1d``, may number its parameters otherwise: it writes)."""
    method = _called(cls, method)
    home = _defining(cls, method)
    same_init = home is not None and _defining(cls, "__init__") == _defining(home, "__init__")
    given = _given().get((home, method)) if home is not None and same_init and built is not None else None
    if given is None or built is None:
        return torch_method_writes(cls, method)
    return any(given_flag(built, *condition) for condition in given)


@functools.cache
def _given() -> dict[tuple[str, str], list[tuple[str, int, bool]]]:
    """class.method -> the constructor parameters one of which must be given for it to write (``w:p@i``)."""
    from codegen.lower.flow.torch_module_methods_table import METHODS

    found: dict[tuple[str, str], list[tuple[str, int, bool]]] = {}
    for key, kind in METHODS.items():
        name, _, method = key.partition(".")
        for condition in kind.partition(":")[2].split(",") if ":" in kind else []:
            param, _, position = condition.rstrip("=").partition("@")
            found.setdefault((name, method), []).append((param, int(position), condition.endswith("=")))
    return found


def module_method(method: str) -> bool:
    """``method`` is one that torch's ``nn.Module`` defines (``state_dict``, ``buffers``; not a submodule's name)."""
    return _defining("Module", method) is not None


def torch_method_runs_children(cls: str, method: str) -> bool:
    """``method`` of torch's module class ``cls`` calls the callables its module holds (its children), writing
    nothing itself: it writes what they write."""
    method = _called(cls, method)
    home = _defining(cls, method)
    return home is not None and method in _classes()[home][3]


def runs_forward(method: str) -> bool:
    """``method``, as torch's ``nn.Module`` defines it, runs its object's own ``forward`` (``_call_impl``)."""
    home = _defining("Module", method)
    return home is not None and method in _classes()[home][4]


def _called(cls: str, method: str) -> str:
    """The method a call of ``method`` on an object of ``cls`` runs for its effect: ``forward`` where ``method``
    runs it (``_call_impl``), else ``method``."""
    home = _defining(cls, method)
    return _FORWARD if home is not None and method in _classes()[home][4] else method


def _defining(cls: str, method: str) -> str | None:
    """The class among ``cls`` and its bases (itself first) that defines ``method``, as the table says."""
    classes = _classes()
    return defining_class(
        cls,
        lambda c: c in classes and any(method in kind for kind in classes[c][1:]),
        lambda c: classes[c][0] if c in classes else (),
    )


@functools.cache
def _classes() -> dict[str, tuple[tuple[str, ...], frozenset[str], frozenset[str], frozenset[str], frozenset[str]]]:
    """Each class: its bases, its methods that write nothing, those that write, those that run its children, those
    that run its own ``forward`` (read on the first question)."""
    from codegen.lower.flow.torch_module_methods_table import BASES, METHODS

    own: dict[str, tuple[set[str], ...]] = {name: tuple(set() for _ in _KINDS) for name in BASES}
    for key, kind in METHODS.items():
        name, _, method = key.partition(".")
        own[name][_KINDS.index(kind.partition(":")[0])].add(method)
    return {
        name: (tuple(BASES[name].split()), *(frozenset(k) for k in kinds))  # type: ignore[misc]
        for name, kinds in own.items()
    }
