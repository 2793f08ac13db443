"""Untransformed decorated code keeps the decorators' meaning, eagerly and under torch.compile."""

from __future__ import annotations

import types

import pytest
import torch

import eager_models
from helpers import capture_graph
from npudsl.errors import NpudslError
from npudsl.race import npudsl_backend
from npudsl.race._timeline import runtime_op
from npudsl.runtime.guards import guard_holds


def _runtime_ops(model: torch.nn.Module) -> list[tuple[str, tuple[object, ...]]]:
    gm = capture_graph(model, torch.randn(2, 4), then=npudsl_backend)
    return [(runtime_op(n), tuple(n.args)) for n in gm.graph.nodes if runtime_op(n)]


def _method(self: object, x: object, factor: int = 2, *, extra: object = None) -> None:
    del self, x, factor, extra


def test_guard_reads_parameters_defaults_and_globals() -> None:
    owner = types.SimpleNamespace(flag=types.SimpleNamespace(deep=0))
    assert guard_holds(None, _method, (), {})
    assert not guard_holds("self.flag.deep", _method, (owner, 1), {})
    assert guard_holds("factor", _method, (owner, 1), {})
    assert not guard_holds("extra", _method, (owner, 1), {})
    assert guard_holds("x", _method, (owner,), {"x": 1})
    assert guard_holds("types.SimpleNamespace", _method, (), {})


def test_guard_naming_nothing_is_an_error() -> None:
    with pytest.raises(NpudslError, match="neither a parameter"):
        guard_holds("nowhere.flag", _method, (), {})


@pytest.mark.parametrize("model_class", [eager_models.Layer, eager_models.Manual])
def test_eager_and_compiled_equal_undecorated(model_class: type) -> None:
    plain, decorated, x = eager_models.Plain(), model_class(), torch.randn(3, 4)
    expected = plain(x)
    assert torch.equal(decorated(x), expected)
    assert torch.equal(torch.compile(decorated, backend=npudsl_backend, fullgraph=True)(x), expected)


def test_auto_sync_forks_and_joins_around_the_stream() -> None:
    ops = [name for name, _ in _runtime_ops(eager_models.Layer())]
    assert ops == [
        "event_record",
        "stream_enter",
        "core_limit_enter",
        "event_wait",
        "event_record",
        "record_stream",
        "record_stream",
        "event_record",
        "core_limit_exit",
        "stream_exit",
        "event_wait",
    ]


def test_events_are_scoped_to_the_class() -> None:
    recorded = [args[0] for name, args in _runtime_ops(eager_models.Layer()) if name == "event_record"]
    scope = "eager_models.Layer"
    assert recorded == [f"{scope}.shared.fork", f"{scope}.shared_done", f"{scope}.shared.join"]


def test_false_guards_remove_stream_and_core_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eager_models.CONFIG.inner, "on", False)
    model = eager_models.Layer()
    model.multistream = False
    ops = [name for name, _ in _runtime_ops(model)]
    assert ops == ["event_record"]


def test_keep_output_clone_copies_tensors_at_top_level_and_in_sequences() -> None:
    x = torch.randn(3)
    first, (second,), number = eager_models.cloned(x)
    assert number == 7 and torch.equal(first, x) and torch.equal(second, x)
    assert first.data_ptr() != x.data_ptr() and second.data_ptr() != x.data_ptr()
    assert eager_models.kept(x) is x


def test_manual_sync_has_no_fork_or_join() -> None:
    events = [args[0] for name, args in _runtime_ops(eager_models.Manual()) if name.startswith("event")]
    assert events == [
        "eager_models.Manual.h_ready",
        "eager_models.Manual.h_ready",
        "eager_models.Manual.shared_done",
        "eager_models.Manual.shared_done",
    ]


def test_module_function_guard_and_keyword_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.randn(4)
    assert torch.equal(eager_models.scaled(x, factor=3.0), x * 3.0)
    assert torch.equal(eager_models.scaled(x, use=False), x)
    monkeypatch.setattr(eager_models.CONFIG, "multistream", False)
    assert torch.equal(eager_models.scaled(x), x * 2.0)
