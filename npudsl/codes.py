"""Every diagnostic code npudsl reports, in one table: code, severity, title, a short fix, and who reports it.

The checks, the collector, the decorators (at decoration time), the eager runtime,
the targets, the SARIF rules and docs/check.md's table all read this module, so a
code's severity and meaning are stated once; nothing else spells a code as a
literal (tests/check/test_codes.py greps for it). It imports neither libcst nor
torch: the runtime rules and ``check`` both load it.
"""

from __future__ import annotations

import enum

import attrs

__all__ = ["ORIGINS", "TABLE", "Code", "Severity", "severity_of"]

# Who reports a code: the file reader, the decorator arguments (statically and at decoration time),
# a rule of ``check``, the chosen target, or decorated code when it runs untransformed.
ORIGINS = ("reader", "decorator", "check", "target", "run time")


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@attrs.frozen(kw_only=True)
class Code:
    """One row of the table (docs/check.md explains each code at length)."""

    id: str = attrs.field(validator=attrs.validators.matches_re(r"NPD\d{3}"))
    severity: Severity
    title: str
    fix: str
    origin: str = attrs.field(validator=attrs.validators.in_(ORIGINS))


TABLE: dict[str, Code] = {}


def _code(code: str, severity: Severity, title: str, fix: str, origin: str = "check") -> str:
    assert code not in TABLE, code
    TABLE[code] = Code(id=code, severity=severity, title=title, fix=fix, origin=origin)
    return code


def severity_of(code: str) -> Severity:
    """The severity the table gives ``code`` (KeyError for a code not in it)."""
    return TABLE[code].severity


E, W = Severity.ERROR, Severity.WARNING

# NPD0xx: the file cannot be read or parsed.
SYNTAX = _code("NPD001", E, "syntax error", "fix what Python's compiler reports", "reader")
UNREADABLE = _code(
    "NPD002", E, "file unreadable or not UTF-8", "save the file as UTF-8 and check its permissions", "reader"
)
NOT_REGULAR = _code("NPD003", W, "not a regular file; skipped", "give npudsl regular .py files only", "reader")

# NPD1xx: a decorator's arguments break the contract.
NOT_LITERAL = _code(
    "NPD101",
    E,
    "decorator argument is not a literal or a module constant",
    "write a literal, or a module-level name bound once to one",
    "decorator",
)
BAD_TAG = _code("NPD102", E, "bad stream tag", 'name the stream with a string, e.g. @on_stream("shared")', "decorator")
BAD_EVENT = _code("NPD103", E, "bad event name", 'use an identifier, or a shared "namespace:identifier"', "decorator")
BAD_WHEN = _code(
    "NPD104", E, "when= is not a dotted name", 'pass a dotted name as a string, e.g. when="self.flag"', "decorator"
)
BAD_NUMBER = _code(
    "NPD105",
    E,
    "bad priority, core count or clone flag",
    "priority 0, core counts >= 1 (or a dotted name), clone a bool",
    "decorator",
)
BAD_SYNC = _code("NPD106", E, "sync= is neither auto nor manual", 'leave sync out, or pass sync="manual"', "decorator")
TWICE = _code(
    "NPD107", E, "decorator appears twice on one function", "keep one; its arguments say everything", "decorator"
)
BAD_PLACE = _code(
    "NPD108",
    E,
    "decorator on something it cannot decorate",
    "decorate module-level functions, methods, or classes with a forward",
    "decorator",
)
BAD_ARGUMENTS = _code(
    "NPD109", E, "decorator arguments missing or malformed", "see the decorator's signature", "decorator"
)
UNRESOLVED = _code(
    "NPD110",
    E,
    "decorator that may or may not be npudsl's",
    "import npudsl's decorator once, by name, at the top of the module",
    "decorator",
)

# NPD2xx: events and synchronization that cannot work.
UNKNOWN_EVENT = _code("NPD201", E, "unknown event", "record the event in the same scope, or fix the name")
EVENT_TWO_STREAMS = _code("NPD202", E, "event recorded on two streams", "record each event on one stream")
WAIT_CYCLE = _code("NPD203", E, "wait cycle (deadlock)", "break the cycle: one function must go first")
GUARD_ROOT = _code("NPD204", E, "when guard with an unknown root", "root it at self, a parameter or a module name")
UNKNOWN_ATTRIBUTE = _code("NPD205", E, "guard or count misspells an attribute", "spell the attribute the class sets")
TENSOR_GUARD = _code("NPD206", E, "when guard read a tensor", "pass a Python bool, fixed for the call", "run time")

# NPD3xx: core limits beyond the device.
CORE_RANGE = _code("NPD301", E, "core limit out of the device's range", "stay within the device, or name it")
CORE_SUM = _code("NPD302", E, "concurrent core limits exceed the device", "split the device between the streams")

# NPD5xx: multi-stream code that runs but is likely wrong or slow (NPD59x: the target's own).
USED_AT_ONCE = _code("NPD501", W, "stream call used at once", "bind the result first, use it later")
NO_CALL_SITE = _code(
    "NPD502", W, "stream function with no visible call site", 'call it from a visible site, or use sync="manual"'
)
DEFAULT_NESTED = _code("NPD504", W, '"default" stream nested in another stream', "call it from main-stream code")
UNUSED_RECORD = _code("NPD505", W, "event recorded but never waited for", "add the matching @after, or drop it")
UNSYNCED_STREAM = _code("NPD506", W, "manual side stream that never waits", "wait for an event, or drop sync=manual")
UNLIMITED_STREAM = _code("NPD507", W, "core-limited stream beside an unlimited one", "limit the other stream too")
UNREADABLE_GUARD = _code("NPD508", W, "call site cannot read the callee's guard", "pass the flag as a plain argument")
UNTYPED_RECEIVER = _code("NPD509", W, "stream method on an object of unstated type", "annotate the parameter")
DOTTED_COUNTS = _code("NPD510", W, "core limit read at call time", "write the counts as numbers to have them checked")
UNJOINED_STREAM = _code(
    "NPD511", W, "side stream never joined (native streams)", "record an event the caller waits for"
)
GE_EVENT_RUNS = _code("NPD512", W, "event order GE cannot carry across runs", "call the recorder first")
UNDEFINED_ATTRIBUTE = _code(
    "NPD513",
    W,
    "guard or count reads an attribute the class never sets",
    "set it in __init__, or silence the line with noqa",
)
SHARED_EVENT_NOWHERE = _code(
    "NPD514", W, "shared event recorded nowhere in the run", "check the recording file in the same run"
)
SPLIT_CHAIN = _code(
    "NPD515", W, "side calls split by values made between them", "assign the values before the first call"
)
CUDA_CORE_LIMIT = _code(
    "NPD590", W, "core_limit has no CUDA counterpart", "the limit applies on NPU targets only", "target"
)
GE_SHARED_EVENT = _code("NPD591", W, "shared event orders nothing on GE", "pass a tensor between the two", "target")
