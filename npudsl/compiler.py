"""``npudsl.compile``: transform the model's classes in-process, then ``torch.compile`` it.

Each target maps to a factory in :data:`BACKENDS`; a factory either returns the
``torch.compile`` keyword arguments that pick the target's backend (``backend=``,
and for ``npugraph_ex`` its ``options=``) or raises :class:`NpudslError` explaining
what the target needs. Factories run before the model is touched, so an unusable
target changes nothing. The user's other keyword arguments pass through unchanged
(``mode="reduce-overhead"`` with ``cuda``, for instance).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from npudsl.errors import NpudslError

__all__ = ["BACKENDS", "compile_model"]

Backend = Callable[..., Any]
CompileArgs = dict[str, Any]  # keyword arguments of torch.compile

GRAPH_OPTIONS = ("mempool", "reuse_within_graph", "clone_inputs", "clone_outputs", "share_inputs_across_graphs")
GRAPH_TARGETS = ("aclgraph", "npugraph_ex", "portable")  # the targets that take GRAPH_OPTIONS


def _portable(options: dict[str, Any]) -> CompileArgs:
    """The race checker, and graph outputs that live as graph memory (StaleOutputError), under seed 003's options."""
    from npudsl.graph_config import graph_memory
    from npudsl.race import portable_backend

    return {"backend": portable_backend(graph_memory(**options))}


def _missing(target: str, needs: str) -> NpudslError:
    return NpudslError(
        f"target {target!r} needs {needs}; use target='portable' to run and check the model on CPU or CUDA"
    )


def _torchair(target: str) -> Any:
    try:
        import torchair
    except ImportError:
        raise _missing(target, "torch_npu with torchair (an Ascend NPU and CANN)") from None
    return torchair


def _aclgraph(options: dict[str, Any]) -> CompileArgs:
    """torchair reduce-overhead, with the graph memory options of seed 003 (docs/contract.md)."""
    from npudsl.graph_config import aclgraph_options, build_compiler_config

    settings = aclgraph_options(**options)  # contradictions fail before anything is imported
    torchair = _torchair("aclgraph")
    config = build_compiler_config(settings, factory=torchair.CompilerConfig)
    return {"backend": torchair.get_npu_backend(compiler_config=config)}


def _ge(options: dict[str, Any]) -> CompileArgs:
    """torchair max-autotune (GE)."""
    torchair = _torchair("ge")
    config = torchair.CompilerConfig()
    config.mode = "max-autotune"
    return {"backend": torchair.get_npu_backend(compiler_config=config)}


def _registered(name: str, target: str) -> str:
    """``name`` if dynamo knows a backend by it (torch_npu registers npugraph_ex through an entry point)."""
    import torch._dynamo

    try:
        torch._dynamo.lookup_backend(name)
    except torch._dynamo.exc.InvalidBackend:
        raise _missing(target, f"torch_npu (2.13 or later), which registers the {name!r} backend") from None
    return name


def _npugraph_ex(options: dict[str, Any]) -> CompileArgs:
    """The npugraph_ex backend, with the graph memory options of seed 003 as its ``options=``."""
    from npudsl.graph_config import NPUGRAPH_EX_BACKEND, npugraph_ex_options

    settings = npugraph_ex_options(**options)  # contradictions fail before the backend is looked up
    return {"backend": _registered(NPUGRAPH_EX_BACKEND, "npugraph_ex"), "options": settings}


def _cuda(options: dict[str, Any]) -> CompileArgs:
    """Inductor, with the user's own options (``mode="reduce-overhead"`` captures CUDA graphs)."""
    return {"backend": "inductor"}


BACKENDS: dict[str, Callable[[dict[str, Any]], CompileArgs]] = {
    "portable": _portable,
    "aclgraph": _aclgraph,
    "ge": _ge,
    "npugraph_ex": _npugraph_ex,
    "cuda": _cuda,
}


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
    if target not in BACKENDS:
        raise NpudslError(f"unknown target {target!r}; choose one of {', '.join(sorted(BACKENDS))}")
    if "backend" in torch_compile_kwargs:
        raise NpudslError("npudsl.compile picks the backend from the target; do not pass backend=")
    options = {name: torch_compile_kwargs.pop(name) for name in GRAPH_OPTIONS if name in torch_compile_kwargs}
    if options and target not in GRAPH_TARGETS:
        raise NpudslError(
            f"graph memory options ({', '.join(options)}) apply to targets {', '.join(map(repr, GRAPH_TARGETS))} only"
        )
    arguments = _merged(BACKENDS[target](options), torch_compile_kwargs)
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
