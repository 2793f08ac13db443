"""Seed 003: memory reuse between aclgraphs, as CompilerConfig assignments.

`graph_memory(...)` checks the user's choices and resolves them (mode 2 follows
mode 1); `aclgraph_options(...)` turns them into the exact `torchair.CompilerConfig`
settings, as (dotted path, value) pairs; every one of the five settings is always
emitted, so the result does not depend on torchair's defaults.
`build_compiler_config(settings)` applies them to a fresh config. `npugraph_ex_options(...)`
spells the same choices as the `options=` of `torch.compile(backend="npugraph_ex")`. The
`portable` target runs the same resolved choices (`npudsl.race`, docs/runtime.md).
This module does not import torch or torchair (torchair only inside
`build_compiler_config`). Table and rules: docs/contract.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from npudsl.errors import NpudslError

__all__ = [
    "CLONE_INPUT",
    "CLONE_OUTPUT",
    "DISABLE_REUSE_IN_SAME_FX",
    "MODE",
    "NPUGRAPH_EX_BACKEND",
    "NPUGRAPH_EX_DEFAULTS",
    "TORCHAIR_DEFAULTS",
    "USE_CUSTOM_POOL",
    "ConfigSetting",
    "GraphConfigError",
    "GraphMemory",
    "aclgraph_options",
    "build_compiler_config",
    "graph_memory",
    "npugraph_ex_options",
]

MODE = "mode"
USE_CUSTOM_POOL = "aclgraph_config.use_custom_pool"  # mode 1
DISABLE_REUSE_IN_SAME_FX = "debug.aclgraph.disable_mempool_reuse_in_same_fx"  # mode 2, inverted
CLONE_INPUT = "debug.aclgraph.clone_input"  # mode 3
CLONE_OUTPUT = "debug.aclgraph.enable_output_clone"

# What a fresh torchair.CompilerConfig holds (checked against the real sources by the contract test).
TORCHAIR_DEFAULTS: dict[str, object] = {
    MODE: "max-autotune",
    USE_CUSTOM_POOL: None,
    DISABLE_REUSE_IN_SAME_FX: False,
    CLONE_INPUT: True,
    CLONE_OUTPUT: False,
}

NPUGRAPH_EX_BACKEND = "npugraph_ex"  # the torch.compile backend torch_npu registers
# npugraph_ex's CompilerConfig options for seed 003, and their defaults (checked against the real sources too).
NPUGRAPH_EX_DEFAULTS: dict[str, object] = {
    "use_graph_pool": None,  # mode 1; a pool turns reuse_graph_pool_in_same_fx off, as in torchair
    "reuse_graph_pool_in_same_fx": True,  # mode 2
    "clone_input": True,  # mode 3
    "clone_output": False,
}


class GraphConfigError(NpudslError, ValueError):
    """Graph memory options that torchair cannot honour together."""


@attrs.frozen(kw_only=True)
class ConfigSetting:
    """`config.<path> = value` on a torchair.CompilerConfig."""

    path: str
    value: Any


@attrs.frozen(kw_only=True)
class GraphMemory:
    """The graph memory options, checked and resolved (what the runtime actually does)."""

    mempool: Any = None  # mode 1: one pool for every graph of this config
    reuse_within_graph: bool = True  # mode 2: the captured graphs of one FX graph share their memory
    clone_inputs: bool = True  # mode 3: user inputs are copied into graph memory before each replay
    clone_outputs: bool = False


def _require_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise GraphConfigError(f"{name} must be True or False, not {value!r}")


def _check_pool(mempool: object) -> None:
    if mempool is not None and not isinstance(mempool, tuple):
        raise GraphConfigError(
            f"mempool must be a pool handle from torch.npu.graph_pool_handle() (a tuple), not {type(mempool).__name__}"
        )


def _reuse(mempool: object, reuse_within_graph: bool | None) -> bool:
    """Mode 2, resolved: on by default, and always off with a pool (mode 1)."""
    if reuse_within_graph is None:
        return mempool is None
    _require_bool("reuse_within_graph", reuse_within_graph)
    if reuse_within_graph and mempool is not None:
        raise GraphConfigError(
            "reuse_within_graph=True contradicts mempool=...: with a custom pool (mode 1) torchair turns "
            "reuse between the aclgraphs of one FX graph (mode 2) off; drop one of the two"
        )
    return reuse_within_graph


def _check_sharing(share: bool, mempool: object, clone_inputs: bool) -> None:
    _require_bool("share_inputs_across_graphs", share)
    if share and mempool is None:
        raise GraphConfigError(
            "share_inputs_across_graphs=True needs mempool=torch.npu.graph_pool_handle(): input memory is "
            "shared between the aclgraphs of different FX graphs only through a custom pool (mode 1)"
        )
    if share and not clone_inputs:
        raise GraphConfigError("share_inputs_across_graphs=True needs clone_inputs=True (mode 3 clones the inputs)")


def graph_memory(
    *,
    mempool: object = None,
    reuse_within_graph: bool | None = None,
    clone_inputs: bool = True,
    clone_outputs: bool = False,
    share_inputs_across_graphs: bool = False,
) -> GraphMemory:
    """Check the graph memory options of seed 003 and resolve them.

    mempool: a `torch.npu.graph_pool_handle()` shared by every graph compiled
    with this config (mode 1; turns mode 2 off). reuse_within_graph: mode 2,
    None means "torchair's choice" (on, or off with a pool). clone_inputs:
    mode 3. clone_outputs: clone every graph output. share_inputs_across_graphs:
    only a check, that modes 1 and 3 are both on (seed 003).
    """
    _check_pool(mempool)
    for name, value in (("clone_inputs", clone_inputs), ("clone_outputs", clone_outputs)):
        _require_bool(name, value)
    reuse = _reuse(mempool, reuse_within_graph)
    _check_sharing(share_inputs_across_graphs, mempool, clone_inputs)
    return GraphMemory(
        mempool=mempool, reuse_within_graph=reuse, clone_inputs=clone_inputs, clone_outputs=clone_outputs
    )


def aclgraph_options(**options: Any) -> tuple[ConfigSetting, ...]:
    """The CompilerConfig settings for reduce-overhead (aclgraph) memory reuse; options as `graph_memory`."""
    memory = graph_memory(**options)
    return (
        ConfigSetting(path=MODE, value="reduce-overhead"),
        ConfigSetting(path=USE_CUSTOM_POOL, value=memory.mempool),
        ConfigSetting(path=DISABLE_REUSE_IN_SAME_FX, value=not memory.reuse_within_graph),
        ConfigSetting(path=CLONE_INPUT, value=memory.clone_inputs),
        ConfigSetting(path=CLONE_OUTPUT, value=memory.clone_outputs),
    )


def npugraph_ex_options(**options: Any) -> dict[str, Any]:
    """``torch.compile(backend="npugraph_ex", options=...)`` for seed 003's memory options (as `graph_memory`);
    every option is spelled out, so the result does not depend on npugraph_ex's defaults."""
    memory = graph_memory(**options)
    return {
        "use_graph_pool": memory.mempool,
        "reuse_graph_pool_in_same_fx": memory.reuse_within_graph,
        "clone_input": memory.clone_inputs,
        "clone_output": memory.clone_outputs,
    }


def _default_factory() -> Any:
    import torchair  # noqa: PLC0415 - only where torch-npu is installed

    return torchair.CompilerConfig()


def build_compiler_config(settings: Iterable[ConfigSetting], factory: Callable[[], Any] = _default_factory) -> Any:
    """A new config from `factory()` (default `torchair.CompilerConfig()`), with each setting applied."""
    config = factory()
    for setting in settings:
        *groups, leaf = setting.path.split(".")
        target = config
        for group in groups:
            target = getattr(target, group)
        setattr(target, leaf, setting.value)
    return config
