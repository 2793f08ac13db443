"""The decorators: validation at decoration time, metadata for tools, untransformed behaviour."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from npudsl import DecoratorError, after, core_limit, keep_output, on_stream, records
from npudsl.schedule import CoreLimitSpec, EventSpec, KeepOutputSpec, Schedule, StreamSpec


@pytest.mark.parametrize(
    "make,code",
    [
        (lambda: on_stream(1), "NPD102"),
        (lambda: on_stream(""), "NPD102"),
        (lambda: on_stream("a b"), "NPD102"),
        (lambda: on_stream("s", -1), "NPD105"),
        (lambda: on_stream("s", sync="later"), "NPD106"),
        (lambda: on_stream("s", when="self.x()"), "NPD104"),
        (lambda: on_stream("s", when=True), "NPD104"),
        (lambda: after(), "NPD109"),
        (lambda: after("not an identifier"), "NPD103"),
        (lambda: records(3), "NPD103"),
        (lambda: core_limit(0, 8), "NPD105"),
        (lambda: core_limit(8, -16), "NPD105"),
        (lambda: core_limit(True, 8), "NPD105"),
        (lambda: keep_output(clone="yes"), "NPD105"),
    ],
)
def test_bad_arguments_fail_at_decoration_time(make, code: str) -> None:
    with pytest.raises(DecoratorError, match=code):
        make()


def test_metadata_is_the_same_whatever_the_order() -> None:
    def body(self, x):
        return x

    a = on_stream("s", sync="manual")(after("go")(records("done")(core_limit(4, 8)(keep_output(body)))))
    b = keep_output(core_limit(4, 8)(records("done")(after("go")(on_stream("s", sync="manual")(body)))))
    expected = Schedule(
        stream=StreamSpec(tag="s", sync="manual", loc=None),
        waits=(EventSpec(events=("go",), loc=None),),
        records=(EventSpec(events=("done",), loc=None),),
        core_limit=CoreLimitSpec(aicore=4, vector=8, loc=None),
        keep_output=KeepOutputSpec(loc=None),
    )
    assert a.__npudsl__ == b.__npudsl__ == expected
    assert a.__wrapped__ is body and b.__wrapped__ is body


def test_events_keep_source_order() -> None:
    fn = after("a")(after("b", "c")(lambda_free))
    assert [spec.names for spec in fn.__npudsl__.waits] == [("a",), ("b", "c")]


def lambda_free(x):
    return x


@pytest.mark.parametrize(
    "decorate",
    [
        lambda f: on_stream("s")(on_stream("t")(f)),
        lambda f: core_limit(1, 1)(core_limit(2, 2)(f)),
        lambda f: keep_output(keep_output(f)),
    ],
)
def test_a_decorator_twice_is_an_error(decorate) -> None:
    with pytest.raises(DecoratorError, match="NPD107"):
        decorate(lambda_free)


def test_misuse_is_rejected() -> None:
    with pytest.raises(DecoratorError, match="NPD108"):
        on_stream("s")(lambda x: x)

    async def coroutine():
        return 1

    def generator():
        yield 1

    for fn in (coroutine, generator):
        with pytest.raises(DecoratorError, match="NPD108"):
            on_stream("s")(fn)
    with pytest.raises(DecoratorError, match="NPD108"):
        on_stream("s")(type("NoForward", (nn.Module,), {}))


def test_class_decoration_wraps_forward() -> None:
    @on_stream("expert")
    @keep_output(clone=True)
    class Expert(nn.Module):
        def forward(self, x):
            return x * 2

    assert Expert.__npudsl__.stream == StreamSpec(tag="expert", loc=None)
    assert Expert.forward.__npudsl__.keep_output == KeepOutputSpec(clone=True, loc=None)
    x = torch.arange(4.0)
    assert torch.equal(Expert()(x), x * 2)


def test_untransformed_code_runs_with_the_same_results() -> None:
    class Block(nn.Module):
        @on_stream("side", when="self.enabled")
        @after("ready")
        @records("done")
        @core_limit(8, 16)
        @keep_output
        def side(self, x):
            return torch.relu(x), x + 1

        enabled = True

    x = torch.randn(5)
    relu, plus = Block().side(x)
    assert torch.equal(relu, torch.relu(x)) and torch.equal(plus, x + 1)


def test_class_and_forward_decorators_merge_and_twice_is_an_error() -> None:
    @on_stream("expert")
    class Expert(nn.Module):
        @core_limit(4, 8)
        def forward(self, x):
            return x * 2

    assert Expert.__npudsl__ == Schedule(
        stream=StreamSpec(tag="expert", loc=None), core_limit=CoreLimitSpec(aicore=4, vector=8, loc=None)
    )
    with pytest.raises(DecoratorError, match="NPD107"):

        @on_stream("expert")
        class Twice(nn.Module):
            @on_stream("other")
            def forward(self, x):
                return x


class _Config:
    aic = 4


class _Counted(nn.Module):
    cfg = _Config()

    @core_limit("self.cfg.aic", "vector")
    def forward(self, x, vector=16):
        return x + 1


def test_dotted_core_counts_are_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from npudsl import runtime

    assert _Counted.forward.__npudsl__.core_limit == CoreLimitSpec(aicore="self.cfg.aic", vector="vector", loc=None)
    seen = []
    real = runtime.core_limit
    monkeypatch.setattr(runtime, "core_limit", lambda a, v: seen.append((a, v)) or real(a, v))
    model, x = _Counted(), torch.zeros(2)
    assert torch.equal(model(x), x + 1) and torch.equal(model(x, vector=8), x + 1)
    assert seen == [(4, 16), (4, 8)]


@pytest.mark.parametrize("value", [0, "4", None, True])
def test_a_dotted_count_that_names_no_positive_integer_fails_at_call_time(value: object) -> None:
    from npudsl.errors import NpudslError

    with pytest.raises(NpudslError, match="NPD105 core_limit vector='vector'"):
        _Counted()(torch.zeros(2), vector=value)


def test_counts_must_be_integers_or_dotted_names() -> None:
    for bad in ("self.", "1abc", "self.cfg()", 2.0):
        with pytest.raises(DecoratorError, match="NPD105"):
            core_limit(bad, 8)
