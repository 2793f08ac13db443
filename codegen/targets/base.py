"""What a target is: how it spells each step of a plan, with hygienic names for one module, and the traits
the checks and ``npudsl.compile`` read (they never test a target's name).

A :class:`Target` is a stateless description; its :class:`Spelling` for one module is a builder
that spells steps as source lines and remembers which imports and helpers they use, so the module
gets exactly those (under names that nothing in the module shadows, see :mod:`codegen.lower.hygiene`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from codegen.frontend.signature import Tensorness
from codegen.lower.hygiene import ModuleNames
from codegen.lower.plan import (
    Assign,
    Clone,
    Context,
    CurrentStream,
    EventRef,
    KeepAlive,
    ModulePlan,
    Record,
    Step,
    Value,
)

if TYPE_CHECKING:
    from codegen.check.diagnostics import Diagnostic
    from codegen.frontend.ir import ModuleIR

__all__ = [
    "CompileArgs",
    "Spelling",
    "Target",
    "indent",
    "is_tensor",
    "picked",
    "quote",
    "returned_record",
    "wants_values",
]

CompileArgs = dict[str, Any]  # keyword arguments of torch.compile


def _no_diagnostics(ir: ModuleIR, plan: ModulePlan) -> Iterable[Diagnostic]:
    return ()


@attrs.frozen(kw_only=True)
class Target:
    """A target: the ``TARGET`` of a folder ``codegen/targets/<name>/``, named by one line of the registry.

    Every trait is stated by every target (none has a default), so a trait added here fails the import of
    each target until it says its value.
    """

    name: str
    spelled_by: Callable[..., Spelling]  # called with ``names=``: the spelling for one module
    backend: Callable[[dict[str, Any]], CompileArgs]  # npudsl.compile: torch.compile's arguments, given the
    # graph memory options (empty unless ``graph_options``); raises NpudslError when the target's software is missing
    event_sync: bool  # orders streams with events (True) or through tensors (GE: tokens, NPD512)
    joins_every_stream: bool  # its graph capture fails unless every side stream rejoins the capturing one (NPD511)
    nests_stream_scopes: bool  # an inner stream scope wins and "default" opens none (NPD504)
    graph_options: bool  # takes npudsl.compile's graph memory options (seed 003: mempool=, clone_inputs=, ...)
    diagnose: Callable[[ModuleIR, ModulePlan], Iterable[Diagnostic]] = _no_diagnostics  # NPD59x, after lowering

    def spelling(self, names: ModuleNames) -> Spelling:
        """The spelling of this target for one module."""
        return self.spelled_by(names=names)

    def compile_args(self, options: dict[str, Any]) -> CompileArgs:
        return self.backend(options)


def quote(text: str) -> str:
    """A double-quoted literal; tags and stream names are validated to need no escapes."""
    return f'"{text}"'


def picked(event: EventRef, one: Callable[[EventRef], str]) -> str:
    """How a step names ``event``: ``one`` of it, or of each event it picks from, indexed (``(A, B)[i % 2]``)."""
    if not event.pick:
        return one(event)
    return f"({', '.join(one(e) for e in event.pick)})[{event.index}]"


def indent(lines: list[str]) -> str:
    """``lines`` (each may span several) one level deeper, each line ending in a newline."""
    return "".join(f"    {line}\n" for line in "\n".join(x.rstrip("\n") for x in lines).splitlines())


def wants_values(step: Step) -> bool:
    """The step reads the returned values (epilogue steps that name none)."""
    return isinstance(step, Clone) or (isinstance(step, KeepAlive) and not step.values) or returned_record(step)


def returned_record(step: Step) -> bool:
    return isinstance(step, Record) and step.returned


@attrs.define(eq=False)
class Spelling:
    """The shared half of every target's spelling; subclasses spell streams, events and records."""

    names: ModuleNames
    imports: dict[str, str] = attrs.Factory(dict)  # import line -> itself, in first-use order
    helpers: dict[str, str] = attrs.Factory(dict)  # helper name -> its source

    # -- names ---------------------------------------------------------------------------------
    def use(self, module: str, name: str | None = None, *, wanted: str | None = None) -> str:
        local, line = self.names.imported(module, name, wanted=wanted)
        if line:
            self.imports.setdefault(line, line)
        return local

    def helper(self, wanted: str, source: str) -> str:
        """A module-level helper, defined once; ``source`` spells it with ``{name}`` for its own name."""
        name = self.names.global_name(wanted)
        if name not in self.helpers:
            self.helpers[name] = source.replace("{name}", name)
        return name

    def nullcontext(self) -> str:
        return self.use("contextlib", "nullcontext")

    # -- what the rewrite asks -----------------------------------------------------------------
    def with_item(self, context: Context) -> str | None:
        text = self.context(context)
        if text is None or context.when is None:
            return text
        return f"{text} if {context.when.text} else {self.nullcontext()}()"

    def statements(self, step: Step, values: tuple[str, ...] = ()) -> list[str]:
        """``step`` as source lines; ``values``: the returned names (for the steps that end a body)."""
        if isinstance(step, Assign):
            return [f"{step.name} = {step.value}"]
        if isinstance(step, KeepAlive):
            kept = step.values or tuple(Value(name=v) for v in values)
            return [line for value in kept for line in self.keep_alive(value, step.stream)]
        if isinstance(step, Clone):
            return [f"{v} = {self.clone(Value(name=v))}" for v in values]
        if returned_record(step) and len(values) == 1:
            return self.record_returned(step, values[0])  # type: ignore[arg-type]
        return self.step(step)

    def construct_lines(self) -> list[str]:
        """Statements that end the ``__init__`` of a class whose methods use streams (none by default)."""
        return []

    def event_comment(self) -> str | None:
        return None

    def import_lines(self) -> list[str]:
        return list(self.imports)

    def helper_source(self) -> str:
        return "".join(f"\n\n{source}" for source in self.helpers.values())

    # -- what each target spells ---------------------------------------------------------------
    def context(self, context: Context) -> str | None:
        raise NotImplementedError

    def step(self, step: Step) -> list[str]:
        """Record, Wait, ForkWait."""
        raise NotImplementedError

    def record_returned(self, step: Record, value: str) -> list[str]:
        """A user event recorded at the end of a body that returns ``value``, the tensor it made last."""
        return self.step(step)

    def keep_alive(self, value: Value, stream: str | CurrentStream) -> list[str]:
        """``stream``: a tag, or the current stream (the caller's, at a join)."""
        raise NotImplementedError

    events_are_variables: bool = True  # events are module-level objects (another module imports them)

    def clone(self, value: Value) -> str:
        raise NotImplementedError

    def define_event(self, event: EventRef) -> str | None:
        return None


def is_tensor(value: Value) -> bool:
    return value.tensor is Tensorness.TENSOR
