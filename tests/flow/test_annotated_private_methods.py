"""A private method of an object the caller was given, annotated with its class, is followed as ``self``'s are.

``_run(self, block: Block, x)`` calls ``self._held(x, c)``, which reads ``c`` on "side", then reads ``c`` again through
``block._helper(c)``, a private method of ``Block`` (``return self.indexer(c)``, or ``return c * 3``). ``used_calls.py``
followed the annotated parameter's submodules only (``block.indexer(c)``), so ``_held`` kept ``c`` with a
``record_stream`` the caller's read already made needless (fails on main); the private method is now read as one of
``self``'s is (``annotated_receivers.private_method``) and the keep goes, race-free and exact on every target. It stays
where the method reads ``c`` only under a flag (taking it out races), and for a public method (a subclass in another
module may override it).
"""

from __future__ import annotations

import types

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked, trace_graph
from test_annotated_receivers import FLAG, KEEP, SURE, TARGETS
from test_annotated_receivers import SOURCE as BASE

_METHOD = "        self.indexer = Indexer(on)\n\n    def NAME(self, c: torch.Tensor) -> torch.Tensor:\n        BODY\n"
THROUGH = "return self.indexer(c)"  # the method reads ``c`` through the class's submodule


def _source(name: str = "_helper", body: str = THROUGH, read: str = SURE) -> str:
    method = _METHOD.replace("NAME", name).replace("BODY", body)
    source = BASE.replace("        self.indexer = Indexer(on)\n", method, 1)
    source = source.replace("return out + block.indexer(c)", f"return out + block.{name}(c)")
    return source.replace("PARAM", "block: Block").replace("READ", read).replace("REBIND", "pass")


def _held(source: str) -> str:
    return method_source(transform_source(source, path="m.py", target="portable"), "_held")


def _eager(source: str, x: torch.Tensor, on: bool) -> torch.Tensor:
    module = types.ModuleType("eager_private")
    exec(compile(source, "<eager_private.py>", "exec"), module.__dict__)  # noqa: S102 (the code under test)
    return module.Model(on)(x)


@pytest.mark.parametrize("body", [THROUGH, "return c * 3"])
def test_no_keep_where_the_given_objects_private_method_reads_it(body: str) -> None:
    assert KEEP not in _held(_source(body=body))


@pytest.mark.parametrize(
    ("name", "body", "read"),
    [
        ("_helper", THROUGH, FLAG),  # the submodule reads ``c`` only under a flag
        ("_helper", FLAG, SURE),  # the method itself
        ("helper", THROUGH, SURE),  # public: a subclass elsewhere may override it
    ],
)
def test_the_keep_stays_where_the_read_is_not_sure(name: str, body: str, read: str) -> None:
    assert _held(_source(name, body, read)).count(KEEP) == 1


@pytest.mark.parametrize("target", TARGETS)
def test_race_free_and_exact(target: str) -> None:
    source, x = _source(), torch.randn(2, 3)
    code = transform_source(source, path="m.py", target=target)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    got = trace_graph(code, target, lambda m: m.Model(), (x,), eager_first=native).outputs
    torch.testing.assert_close(got, _eager(source, x, True))


def test_without_the_keep_a_read_under_a_flag_races() -> None:
    source, x = _source(read=FLAG), torch.randn(2, 3)
    code = transform_source(source, path="m.py", target="portable")
    body = method_source(code, "_held")
    without = code.replace(body, body.replace(KEEP, "pass"))
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(without, "portable", lambda m: m.Model(False), (x,))
