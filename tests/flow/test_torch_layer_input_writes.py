"""A torch layer built to write its input in place: ``self.act = nn.ReLU(inplace=True)`` then ``self.act(x)``.

``ReLU.forward`` is ``F.relu(input, inplace=self.inplace)``: built with ``inplace=True`` it writes the tensor its
caller hands it. ``imported_writes.py`` read every torch class as writing none of its arguments, so the caller ran
``self.act(x)`` while a side call still read ``x`` (the race checker reports it on the previous main). The table
``torch_layer_writes_table.py`` (built from torch's sources) says which inputs each layer writes under which
constructor argument; the layer's building call says whether it was given: ``nn.ReLU()`` writes nothing, and its call
still overlaps the side call.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_files, run_generated
from method_caller import caller_source
from method_source import method_source

from codegen.lower.flow.torch_layer_writes_build import TABLE, build

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.leaky = nn.LeakyReLU(0.1, True)
        self.plain = nn.ReLU()

    @on_stream("side")
    def send(self, x):
        return x.tanh()

    def by_inplace(self, x):
        a = self.send(x)
        h = self.act(x)
        return h + a

    def by_position(self, x):
        a = self.send(x)
        h = self.leaky(x)
        return h + a

    def by_plain(self, x):
        a = self.send(x)
        h = self.plain(x)
        return h + a
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

WRITING = {"by_inplace": "h = self.act(x)", "by_position": "h = self.leaky(x)"}
EXPECTED = {
    "by_inplace": lambda x: torch.relu(x) + x.tanh(),
    "by_position": lambda x: torch.nn.functional.leaky_relu(x, 0.1) + x.tanh(),
    "by_plain": lambda x: torch.relu(x) + x.tanh(),
}


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = generated_files(tmp_path, "pkg_layer_writes", {"__init__.py": INIT, "model.py": MODEL}, target)
    return name, codes["model.py"]


def _waits_for_the_side(text: str) -> bool:
    return any(line.strip().startswith("runtime.wait(") and 'send.join")' in line for line in text.splitlines())


def test_the_table_is_the_installed_torchs() -> None:
    text = build()
    assert text == TABLE.read_text(encoding="utf-8")  # rebuild: python -m codegen.lower.flow.torch_layer_writes_build
    assert '"ReLU": "input@0:inplace@0="' in text
    assert '"LeakyReLU": "input@0:inplace@1="' in text
    assert '"Linear"' not in text


@pytest.mark.parametrize("method", WRITING)
def test_the_in_place_layer_waits_for_the_side_read(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], method)
    before, after = body.split(WRITING[method])
    joined = _waits_for_the_side(before) or "runtime.stream" not in before  # joined before it, or run at once
    assert joined and not _waits_for_the_side(after)  # the previous main waited after it


def test_a_layer_built_without_the_flag_still_overlaps(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "by_plain")
    before, after = body.split("h = self.plain(x)")
    assert "runtime.stream" in before and not _waits_for_the_side(before) and _waits_for_the_side(after)


@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"])
@pytest.mark.parametrize("method", EXPECTED)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), eager_first=native, method=method)
    torch.testing.assert_close(got, EXPECTED[method](x))
