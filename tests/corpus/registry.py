"""The corpus entries: where each lives, which idioms it exercises, how to build and feed it.

Each entry is a package ``corpus.<name>`` (``tests/corpus/<name>/``). Its ``__init__``
defines ``build(multistream=True, ...)`` (the decorated model, seeded),
``build_twin(...)`` (the undecorated single-stream twin, same parameter names),
``example_inputs()`` (a tuple: tensors, and non-tensor arguments where the model
takes them), optionally ``extra_inputs()`` (more such tuples, for other paths),
``IDIOMS`` (ids of :data:`IDIOMS`), ``UPSTREAM`` (the public files it is shaped
after) and optionally ``NEEDS`` (npudsl features beyond the oldest decorator
forms, see :data:`NEEDS`). Importing an entry's ``__init__`` does not import its
decorated modules; ``build()`` does.

For the transform matrix: ``Entry.sources`` are every file of the package (the
twin and ``__init__`` use no decorators), ``Entry.decorated_files`` those that use
the decorators, ``Entry.model_files`` every module of the decorated model.
Entries import only inside their own package (relative imports), so a package
copied or transformed elsewhere keeps working under any parent name.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["ENTRIES", "IDIOMS", "NAMES", "NEEDS", "ROOT", "Entry", "entry"]

ROOT = Path(__file__).resolve().parent
PACKAGE = __name__.rpartition(".")[0]

IDIOMS: dict[str, str] = {
    "param_when": "on_stream(when=...) rooted at a parameter of the stream function, passed per call or defaulted",
    "if_call": "a stream call under `if shared_experts is not None:`, with an early return on the other path",
    "one_line": "`if c: y = self.f(x)`, `y = self.f(x); z = g(y)`, `if c: return y`",
    "non_tensor_args": "stream functions taking bools, metadata objects, tuple caches, modules, unannotated flags",
    "container_returns": "@keep_output on tuples (with None or int), namedtuples (topk), lists, dicts",
    "optional_star_static": "tensors passed as optional arguments, through *args, to a @staticmethod stream function",
    "many_callers": "one stream callable reached from another class, a lambda, an aliased import, `module.Class()`",
    "try_finally": "a stream body with `try: return ...` / `finally:` doing device work",
    "config_when": "when='config.X' on a module global (callers in another file), and when='self.x' on methods",
    "manual_pipeline": 'sync="manual" schedules with @after/@records on several named streams',
    "side_to_side": "a value made on side stream A read by a call on side stream B",
    "phased_shared": "the shared expert in three side-stream phases around dispatch and combine",
    "loop_call": "a stream call in a loop, its result used later in the iteration or in the next one",
    "core_split": "a side stream at 8/16 cores beside a main stream at 16/32 (@core_limit)",
    "six_streams": "communication pipelined against communication on six named streams",
    "module_constants": 'stream tags from module-level constants (STREAM_SHARED = "shared")',
    "deep": "many layers sharing one stream per role; build(layers=N)",
    "inplace_side_output": "a side call's result written in place on the main stream after the join, then returned",
    "side_cache_write": "a side call writes a cache in place (passed in, or through an object argument); main reads "
    "it after the join",
    "per_layer_streams": "a per-layer setting (a compress ratio) decides which streams and core limits a layer uses",
}

NEEDS: dict[str, str] = {
    "dotted_core_limit": 'core_limit counts given as dotted names read at call time ("self.cfg.moe_aic_num")',
    "shared_events": 'events shared across classes and files ("moe:before_dispatch", CONTRACT section 1)',
    "ge_fork_edges": "GE fork edges after a tuple unpacked, a subscript or a submodule call (issue 26)",
}

# need -> (targets where npudsl falls short today, None: every target and eager; marks of the error it gives)
_REFUSED_WITH: dict[str, tuple[tuple[str, ...] | None, tuple[str, ...]]] = {
    "dotted_core_limit": (None, ("core_limit",)),
    "shared_events": (None, ("NPD103", "NPD201")),
    "ge_fork_edges": (("ge",), ("is read on stream",)),
}

NAMES = (
    "vllm_fused_moe",
    "vllm_mla",
    "vllm_w8a8_shared",
    "vllm_shared_events",
    "cann_v32_indexer",
    "cann_v32_deep",
    "cann_longcat_split",
    "cann_longcat_lite_cores",
    "cann_layer_prefetch",
    "omni_decode_six_streams",
    "omni_prefill_manual",
    "omni_config_streams",
    "sglang_many_callers",
    "vllm_native_shared_expert",
    "ge_mla_waits",
    "ge_moe_mc2_waits",
    "same_stream_chain",
    "sglang_glm4_share_stream",
    "cann_v4_compressor",
    "vllm_qwen3_dbo",
    "sglang_dsa_alt_stream",
    "cann_r1_microbatch",
    "vllm_dsv4_dsa_overlap",
    "vllm_cp_chunked_prefill",
    "omni_moe_prefetch",
)


@dataclass(frozen=True)
class Entry:
    name: str
    package: str
    path: Path
    idioms: tuple[str, ...]
    upstream: tuple[str, ...]
    needs: tuple[str, ...]

    @property
    def module(self) -> ModuleType:
        return importlib.import_module(self.package)

    @property
    def sources(self) -> tuple[Path, ...]:
        return tuple(sorted(self.path.glob("*.py")))

    @property
    def model_files(self) -> tuple[Path, ...]:
        """The model's modules: every file but ``__init__.py`` and ``twin.py``."""
        return tuple(p for p in self.sources if p.name not in ("__init__.py", "twin.py"))

    @property
    def decorated_files(self) -> tuple[Path, ...]:
        """The model's modules that use the decorators (those importing npudsl)."""
        return tuple(p for p in self.model_files if "from npudsl import" in p.read_text())

    @property
    def twin_file(self) -> Path:
        return self.path / "twin.py"

    def build(self, **kwargs: Any) -> Any:
        return self.module.build(**kwargs)

    def build_twin(self, **kwargs: Any) -> Any:
        return self.module.build_twin(**kwargs)

    def refusal(self, error: BaseException, target: str | None = None) -> str | None:
        """Why ``error`` (on ``target``; ``None``: eager) is npudsl falling short of a feature this entry needs
        (see :data:`NEEDS`), else ``None``."""
        for need in self.needs:
            targets, marks = _REFUSED_WITH[need]
            if (targets is None or target in targets) and any(mark in str(error) for mark in marks):
                return f"{self.name} needs {NEEDS[need]}; npudsl refuses it: {str(error).splitlines()[0]}"
        return None

    def inputs(self) -> list[tuple[Any, ...]]:
        """Fresh input tuples: ``example_inputs()`` then ``extra_inputs()`` when the entry has it."""
        extra = getattr(self.module, "extra_inputs", list)
        return [self.module.example_inputs(), *extra()]


def _load(name: str) -> Entry:
    package = f"{PACKAGE}.{name}"
    module = importlib.import_module(package)
    return Entry(name=name, package=package, path=ROOT / name, idioms=tuple(module.IDIOMS),
                 upstream=tuple(module.UPSTREAM), needs=tuple(getattr(module, "NEEDS", ())))


ENTRIES: tuple[Entry, ...] = tuple(_load(name) for name in NAMES)


def entry(name: str) -> Entry:
    for found in ENTRIES:
        if found.name == name:
            return found
    raise KeyError(name)
