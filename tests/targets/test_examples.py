"""Every example, for every new target: it compiles, a second transform is a no-op, it imports no npudsl
(portable: only the runtime), and the native targets import without a device and compute the same results."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest
import torch

from codegen.driver.api import transform_source
from fake_device import FakeDevice

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODELS = {"seed000.py": "Model", "moe_decoder.py": "MoEDecoder", "core_split.py": "CoreSplitBlock"}
TARGETS = ("portable", "cuda", "npugraph_ex", "ge")
NATIVE = {"cuda": "cuda", "npugraph_ex": "npu"}


def _generated(example: str, target: str) -> str:
    path = EXAMPLES / example
    return transform_source(path.read_text(encoding="utf-8"), path=str(path), target=target)


def _npudsl_imports(code: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "npudsl":
            found |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "npudsl"}
    return found


def _module(code: str, name: str, device: FakeDevice | None = None, attr: str = "") -> types.ModuleType:
    """Execute ``code`` as module ``name``; with ``device``, its ``torch.<attr>`` is that fake."""
    module = types.ModuleType(name)
    own_torch = _TorchWith(attr, device) if device else torch
    saved = sys.modules["torch"]
    sys.modules["torch"] = own_torch  # type: ignore[assignment]
    try:
        exec(compile(code, f"{name}.py", "exec"), module.__dict__)
    finally:
        sys.modules["torch"] = saved
    return module


class _TorchWith(types.ModuleType):
    """``torch`` as the generated module sees it: the real one, but ``torch.<attr>`` is a fake device."""

    def __init__(self, attr: str, device: FakeDevice) -> None:
        super().__init__("torch")
        self._attr, self._device = attr, device

    def __getattr__(self, name: str) -> object:
        return self._device if name == self._attr else getattr(torch, name)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("example", sorted(MODELS))
def test_compiles_is_idempotent_and_imports_no_npudsl(example: str, target: str) -> None:
    code = _generated(example, target)
    compile(code, example, "exec")
    assert transform_source(code, path=str(EXAMPLES / example), target=target) == code
    assert _npudsl_imports(code) == ({"npudsl.runtime"} if target == "portable" else set())


@pytest.mark.parametrize("target", sorted(NATIVE))
@pytest.mark.parametrize("example", sorted(MODELS))
def test_native_import_touches_no_device_and_results_match(
    example: str, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeDevice()
    monkeypatch.setattr(torch.Tensor, "record_stream", lambda self, stream: fake.calls.update(["record_stream"]))
    module = _module(_generated(example, target), example.removesuffix(".py"), fake, NATIVE[target])
    assert not fake.calls, "importing the generated module created streams or events"
    torch.manual_seed(0)
    model = getattr(module, MODELS[example])()
    inputs = module.example_inputs()
    first = model(*inputs)
    created = fake.calls["Stream"] + fake.calls["Event"]
    assert created and fake.limit == FakeDevice().limit, "no stream made, or a core limit not restored"
    again = model(*inputs)
    assert fake.calls["Stream"] + fake.calls["Event"] == created, "streams or events created twice"
    torch.manual_seed(0)
    reference = _module((EXAMPLES / example).read_text(encoding="utf-8"), f"ref_{example}")
    expected = getattr(reference, MODELS[example])()(*inputs)
    torch.testing.assert_close(first, expected)
    torch.testing.assert_close(again, expected)


def test_cuda_records_crossing_tensors_while_a_graph_is_captured(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under eager CUDA graph capture the allocator holds a recorded block until capture ends: the pool grows,
    but no stream reuses memory another may still read. Skipping the record there would race, so the
    generated code records exactly as it does outside capture."""
    recorded = []
    monkeypatch.setattr(torch.Tensor, "record_stream", lambda self, stream: recorded.append(stream))
    counts = []
    for capturing in (False, True):
        recorded.clear()
        fake = FakeDevice(capturing=capturing)
        module = _module(_generated("moe_decoder.py", "cuda"), "moe_decoder", fake, "cuda")
        module.MoEDecoder()(*module.example_inputs())
        counts.append(len(recorded))
    assert counts[0] > 0
    assert counts[1] == counts[0]


class _DeviceHere(FakeDevice):
    def is_available(self) -> bool:
        return True


SUBCLASS = '''\
import torch
from torch import nn

from npudsl import on_stream


class Side(nn.Module):
    @on_stream("side")
    def forward(self, x):
        return x.cos()


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = Side()

    def forward(self, x):
        return x


class Overlapped(Base):
    """No ``__init__`` of its own: the multi-stream forward of a model class it inherits from."""

    def forward(self, x):
        y = self.side(x)
        z = x.sin()
        return y + z


class Deeper(Overlapped):
    def forward(self, x):
        return super().forward(x) * 2
'''


def _built_then_run(
    code: str, name: str, target: str, build: str, inputs: tuple[torch.Tensor, ...], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, object]:
    """(streams and events made by building ``build``, the first output), checking that running makes none."""
    fake = _DeviceHere()
    monkeypatch.setattr(torch.Tensor, "record_stream", lambda self, stream: fake.calls.update(["record_stream"]))
    module = _module(code, name, fake, NATIVE[target])
    model = getattr(module, build)()
    made = fake.calls["Stream"] + fake.calls["Event"]
    out = model(*inputs)
    assert fake.calls["Stream"] + fake.calls["Event"] == made, "a stream or event made inside the forward"
    return made, out


@pytest.mark.parametrize("target", sorted(NATIVE))
@pytest.mark.parametrize("example", sorted(MODELS))
def test_native_streams_are_made_when_the_model_is_built(
    example: str, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """seed000's ``Model`` has no ``__init__``: the generated one makes the streams at construction."""
    inputs = _module(_generated(example, target), "inputs_only").example_inputs()
    made, _ = _built_then_run(
        _generated(example, target), example.removesuffix(".py"), target, MODELS[example], inputs, monkeypatch
    )
    assert made


@pytest.mark.parametrize("target", sorted(NATIVE))
def test_a_subclass_without_init_makes_its_streams_when_built(target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    code = transform_source(SUBCLASS, path="subclass.py", target=target)
    assert code.count("def __init__(self, *args, **kwargs) -> None:") == 1  # Overlapped's; Deeper inherits it
    x = torch.randn(3)
    made, out = _built_then_run(code, "subclass", target, "Deeper", (x,), monkeypatch)
    assert made == 3  # the "side" stream, the fork and the join events
    torch.testing.assert_close(out, (x.cos() + x.sin()) * 2)
    assert transform_source(code, path="subclass.py", target=target) == code
