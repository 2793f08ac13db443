"""``npudsl.compile``: transform the model's classes in-process, then ``torch.compile`` it.

Each target of the registry (``codegen.targets``, a folder per target) says how it is
compiled: its ``compile_args`` (``backend.py`` in its folder) either returns the
``torch.compile`` keyword arguments that pick the target's backend (``backend=``,
and for ``npugraph_ex`` its ``options=``) or raises :class:`NpudslError` explaining
what the target needs, and its trait ``graph_options`` says whether it takes the
graph memory options. They run before the model is touched, so an unusable
target changes nothing. The user's other keyword arguments pass through unchanged
(``mode="reduce-overhead"`` with ``cuda``, for instance).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from npudsl.errors import NpudslError

if TYPE_CHECKING:
    from codegen.targets.base import Target

__all__ = ["GRAPH_OPTIONS", "compile_model"]

CompileArgs = dict[str, Any]  # keyword arguments of torch.compile

GRAPH_OPTIONS = ("mempool", "reuse_within_graph", "clone_inputs", "clone_outputs", "share_inputs_across_graphs")


def _targets() -> dict[str, Target]:
    """The registry of targets (``codegen.targets``): imported when asked, so ``import npudsl`` stays cheap."""
    from codegen.targets import TARGETS

    return TARGETS


def _merged(chosen: CompileArgs, given: dict[str, Any]) -> CompileArgs:
    """The user's torch.compile arguments with the target's; an option given both ways is an error."""
    if "options" in chosen and given.get("options"):
        both = sorted(set(chosen["options"]) & set(given["options"]))
        if both:
            raise NpudslError(
                f"options {', '.join(map(repr, both))} are set by npudsl's graph memory arguments; "
                "pass mempool=, reuse_within_graph=, clone_inputs= or clone_outputs= instead"
            )
        chosen = {**chosen, "options": {**given["options"], **chosen["options"]}}
    return {**given, **chosen}


def compile_model(model: Any, target: str = "portable", **torch_compile_kwargs: Any) -> Any:
    """Transform ``model``'s classes for ``target`` (swapping its instances' classes) and ``torch.compile`` it.

    With ``portable``, the backend checks every captured graph for cross-stream
    races (raising :class:`~npudsl.errors.StreamRaceError`), runs it as captured,
    and gives its outputs the lifetime of graph memory (using one after a later
    replay overwrote it raises :class:`~npudsl.errors.StaleOutputError`).
    ``mempool``, ``reuse_within_graph``, ``clone_inputs``, ``clone_outputs`` and
    ``share_inputs_across_graphs`` are seed 003's graph memory options: torchair's
    CompilerConfig with ``aclgraph`` (``npudsl.graph_config.aclgraph_options``), the
    same rules of reuse with ``portable`` (``npudsl.graph_config.graph_memory``), and
    npugraph_ex's ``options=`` with ``npugraph_ex`` (``npudsl.graph_config.npugraph_ex_options``).
    ``cuda`` compiles with inductor; its keyword arguments (``mode=``, ``options=``, ...) pass through.
    """
    targets = _targets()
    if target not in targets:
        raise NpudslError(f"unknown target {target!r}; choose one of {', '.join(sorted(targets))}")
    if "backend" in torch_compile_kwargs:
        raise NpudslError("npudsl.compile picks the backend from the target; do not pass backend=")
    options = {name: torch_compile_kwargs.pop(name) for name in GRAPH_OPTIONS if name in torch_compile_kwargs}
    if options and not targets[target].graph_options:
        takers = sorted(name for name, each in targets.items() if each.graph_options)
        raise NpudslError(
            f"graph memory options ({', '.join(options)}) apply to targets {', '.join(map(repr, takers))} only"
        )
    arguments = _merged(targets[target].compile_args(options), torch_compile_kwargs)
    import torch

    if not isinstance(model, torch.nn.Module):
        raise NpudslError(_not_a_module(model))

    from npudsl.runtime.loader import swap_classes

    swap_classes(model, target)
    return torch.compile(model, **arguments)


def _not_a_module(model: Any) -> str:
    """The error for a plain function, a class or anything else: npudsl rewrites the classes of a model's modules."""
    name = getattr(model, "__qualname__", type(model).__name__)
    if isinstance(model, type):
        return f"npudsl.compile takes an nn.Module instance, not the class {name} (hint: pass {name}(...))"
    what = f"function {name}" if callable(model) else f"{type(model).__name__}"
    return (
        f"npudsl.compile takes an nn.Module, not a {what} (hint: call the decorated code from an nn.Module's "
        "forward and pass that module)"
    )
