"""``npudsl.compile``: transform the model's classes in-process, then ``torch.compile`` it.

Each target maps to a backend factory in :data:`BACKENDS`; a factory either
returns a ``torch.compile`` backend or raises :class:`NpudslError` explaining what
the target needs. Factories run before the model is touched, so an unusable
target changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from npudsl.errors import NpudslError

__all__ = ["BACKENDS", "compile_model"]

Backend = Callable[..., Any]


GRAPH_OPTIONS = ("mempool", "reuse_within_graph", "clone_inputs", "clone_outputs", "share_inputs_across_graphs")


def _portable(options: dict[str, Any]) -> Backend:
    """The race checker, and graph outputs that live as graph memory (StaleOutputError), under seed 003's options."""
    from npudsl.graph_config import graph_memory
    from npudsl.race import portable_backend

    return portable_backend(graph_memory(**options))


def _torchair(target: str) -> Any:
    try:
        import torchair
    except ImportError:
        raise NpudslError(
            f"target {target!r} needs torch_npu with torchair (an Ascend NPU and CANN); "
            "use target='portable' to run and check the model on CPU or CUDA"
        ) from None
    return torchair


def _aclgraph(options: dict[str, Any]) -> Backend:
    """torchair reduce-overhead, with the graph memory options of seed 003 (docs/contract.md)."""
    from npudsl.graph_config import aclgraph_options, build_compiler_config

    settings = aclgraph_options(**options)  # contradictions fail before anything is imported
    torchair = _torchair("aclgraph")
    return torchair.get_npu_backend(compiler_config=build_compiler_config(settings, factory=torchair.CompilerConfig))


def _torchair_mode(target: str, mode: str) -> Callable[[dict[str, Any]], Backend]:
    def factory(options: dict[str, Any]) -> Backend:
        torchair = _torchair(target)
        config = torchair.CompilerConfig()
        config.mode = mode
        return torchair.get_npu_backend(compiler_config=config)

    return factory


def _not_compiled(options: dict[str, Any]) -> Backend:
    raise NpudslError("target 'cuda' is for `npudsl transform`; compile its output with torch.compile")


BACKENDS: dict[str, Callable[[dict[str, Any]], Backend]] = {
    "portable": _portable,
    "aclgraph": _aclgraph,
    "ge": _torchair_mode("ge", "max-autotune"),
    "npugraph_ex": _torchair_mode("npugraph_ex", "npugraph_ex"),
    "cuda": _not_compiled,
}


def compile_model(model: Any, target: str = "portable", **torch_compile_kwargs: Any) -> Any:
    """Transform ``model``'s classes for ``target`` (swapping its instances' classes) and ``torch.compile`` it.

    With ``portable``, the backend checks every captured graph for cross-stream
    races (raising :class:`~npudsl.errors.StreamRaceError`), runs it as captured,
    and gives its outputs the lifetime of graph memory (using one after a later
    replay overwrote it raises :class:`~npudsl.errors.StaleOutputError`).
    ``mempool``, ``reuse_within_graph``, ``clone_inputs``, ``clone_outputs`` and
    ``share_inputs_across_graphs`` are seed 003's graph memory options: torchair's
    CompilerConfig with ``aclgraph`` (``npudsl.graph_config.aclgraph_options``), the
    same rules of reuse with ``portable`` (``npudsl.graph_config.graph_memory``).
    """
    if target not in BACKENDS:
        raise NpudslError(f"unknown target {target!r}; choose one of {', '.join(sorted(BACKENDS))}")
    if "backend" in torch_compile_kwargs:
        raise NpudslError("npudsl.compile picks the backend from the target; do not pass backend=")
    options = {name: torch_compile_kwargs.pop(name) for name in GRAPH_OPTIONS if name in torch_compile_kwargs}
    if options and target not in ("aclgraph", "portable"):
        raise NpudslError(f"graph memory options ({', '.join(options)}) apply to targets 'aclgraph' and 'portable' only")
    backend = BACKENDS[target](options)
    import torch

    from npudsl.runtime.loader import swap_classes

    swap_classes(model, target)
    return torch.compile(model, backend=backend, **torch_compile_kwargs)
