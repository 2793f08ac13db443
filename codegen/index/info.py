"""What the run index holds: a stream function (``CalleeInfo``), a call of one (``CallInfo``), the index itself.

Frozen records, made once per run by ``codegen.index.index.build_index`` before any file is rewritten and read
by every stage after it (check, lower, the driver's triage), in the workers too.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from codegen.driver.modules import ModuleId
from codegen.frontend.ir import Loc
from codegen.frontend.signature import Signature
from codegen.lower.plan import EventRef

__all__ = ["CalleeInfo", "CallInfo", "RunIndex"]


@attrs.frozen(kw_only=True)
class CalleeInfo:
    key: str  # "module:Class.method" or "module:function"
    tag: str
    priority: int
    when: str | None
    auto: bool  # automatic fork/join
    fork: EventRef
    join: EventRef
    params: tuple[str, ...] = ()  # the function's parameter names (a decorated class: its forward's)
    signature: Signature = Signature(params=())
    writes: tuple[str, ...] = ()  # parameters whose memory the body may write in place (``codegen.lower.flow.writes``)
    compiled_apart: bool = False  # under ``torch.compiler.disable``: its graph is not its caller's
    writes_state: frozenset[str] = frozenset()  # the attributes of its object the body changes ("*": unnamed)
    state_in_place: frozenset[str] = frozenset()  # those of them it only writes in place (made elsewhere)
    reads_state: frozenset[str] = frozenset({"*"})  # the attributes of its object the body reads ("*": any)
    read_paths: frozenset[str] = frozenset()  # the chains of its object the body reads, whole (``body_reads.py``)
    changes_state: frozenset[str] = frozenset()  # the attributes of its object the body, or a method it calls,
    # may assign ("*": any; ``guard_flips.py``)
    flips_guard: bool = False  # the body assigns what its ``when`` reads: the call site reads it once
    class_level: bool = False  # a decorated class: the key names its forward
    static: bool = False  # a staticmethod
    user_events: bool = False  # it waits for or records an event of the user's (``@after``, ``@records``)

    @property
    def module(self) -> str:
        return self.key.split(":", 1)[0]

    @property
    def qualname(self) -> str:
        return self.key.split(":", 1)[1]


@attrs.frozen(kw_only=True)
class CallInfo:
    callee: str
    module: str
    caller: str  # qualname of the calling function
    spelled: str  # the call as written, up to its arguments (``self.shared``), for messages
    caller_stream: str  # the stream the caller runs on ("default" unless decorated)
    bindable: bool  # a plain statement binds (or drops) the result, so the caller can join later
    loc: Loc | None = None  # the call's position in the caller's module
    unkept: bool = False  # bound, but it reads module state the caller changes through a local: used at once


@attrs.frozen(kw_only=True)
class RunIndex:
    callees: dict[str, CalleeInfo]
    classes: dict[str, tuple[str, ...]]  # class name -> forward keys of decorated classes
    submodules: dict[str, dict[str, str]]  # "module:Class" -> {attribute: class name}
    calls: dict[str, tuple[CallInfo, ...]]  # callee key -> visible call sites
    imports: dict[str, dict[str, tuple[str, str]]]  # module -> {local name: (import spec, name imported)}
    stream_calls: dict[str, tuple[CallInfo, ...]] = attrs.Factory(dict)  # like calls, for every stream function
    modules: dict[str, ModuleId] = attrs.Factory(dict)  # module key -> its identity (see codegen.driver.modules)
    shared_records: frozenset[str] = frozenset()  # the shared events ("ns:name") some function of the run records
    returns: Mapping[str, Mapping[str, str]] = attrs.Factory(dict)  # module -> {function: its return annotation}
    elements: dict[str, dict[str, str]] = attrs.Factory(dict)  # "module:Class" -> {list attribute: element class}
    # one per run: the final index, the partial one with its calls added, keeps it (``per_index.per_run``)
    run: object = attrs.field(factory=object, eq=False, repr=False)
    # dotted name -> the run keys of ``modules`` with it, in order; made with the index (``modules`` is
    # complete by then and never changed after), so ``key_of`` does not scan every module on every question
    _keys_by_dotted: dict[str, list[str]] = attrs.field(
        init=False, eq=False, repr=False, default=attrs.Factory(lambda self: _by_dotted(self.modules), takes_self=True)
    )

    def package_of(self, module: str) -> str:
        """The package that relative imports in ``module`` (a run key) resolve against."""
        found = self.modules.get(module) or ModuleId.of(module)
        return found.dotted if found.package else found.dotted.rpartition(".")[0]

    def key_of(self, dotted: str) -> str:
        """The run key of the module imported as ``dotted``: itself, or the one file of the run it names."""
        if dotted in self.modules or not self.modules:
            return dotted
        keys = self._keys_by_dotted.get(dotted, ())
        return keys[0] if len(keys) == 1 else dotted


def _by_dotted(modules: dict[str, ModuleId]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for key, identity in modules.items():
        found.setdefault(identity.dotted, []).append(key)
    return found
