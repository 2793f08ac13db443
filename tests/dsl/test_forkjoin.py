"""Fork and join, defined once (``npudsl.forkjoin``): the steps of a call, on a log of which stream does what.

The eager runtime issues these steps with the runtime ops (tests/runtime/test_eager.py
checks the captured order) and suggest's simulator times them on its clocks
(tests/suggest checks its predictions).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

import attrs
import pytest

from npudsl import forkjoin


@attrs.define
class _Log:
    """An issuer that writes down what each stream does."""

    on: str = "main"
    lines: list[tuple[str, str, str]] = attrs.Factory(list)

    def record(self, event: str) -> None:
        self.lines.append((self.on, "record", event))

    def wait(self, event: str) -> None:
        self.lines.append((self.on, "wait", event))

    @contextlib.contextmanager
    def switch(self, stream: str) -> Iterator[None]:
        before, self.on = self.on, stream
        try:
            yield
        finally:
            self.on = before


def test_a_call_forks_runs_records_its_join_and_the_caller_joins_later() -> None:
    log = _Log()
    with forkjoin.forked(log, "m.C.part", log.switch("side")):
        log.lines.append((log.on, "run", "body"))
    log.lines.append((log.on, "run", "other work"))
    forkjoin.join(log, "m.C.part")
    assert log.lines == [
        ("main", "record", "m.C.part.fork"),
        ("side", "wait", "m.C.part.fork"),
        ("side", "run", "body"),
        ("side", "record", "m.C.part.join"),
        ("main", "run", "other work"),
        ("main", "wait", "m.C.part.join"),
    ]


def test_the_body_raising_records_no_join() -> None:
    log = _Log()
    with pytest.raises(ValueError), forkjoin.forked(log, "e", log.switch("side")):
        raise ValueError("body")
    assert log.lines == [("main", "record", "e.fork"), ("side", "wait", "e.fork")]
    assert log.on == "main"


def test_the_join_waits_before_the_first_use_else_at_the_end() -> None:
    assert forkjoin.join_point([7, 4, 9], end=12) == 4
    assert forkjoin.join_point([], end=12) == 12
    assert forkjoin.join_point([], end=None) is None


def test_event_tags_are_the_roles() -> None:
    assert [forkjoin.event("m.f", role) for role in forkjoin.ROLES] == ["m.f.fork", "m.f.join"]
    with pytest.raises(AssertionError):
        forkjoin.event("m.f", "sync")


def test_the_module_is_pure() -> None:
    """``check`` and ``transform`` import it without torch."""
    probe = "import sys, npudsl.forkjoin, npudsl.schedule; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
