"""What a method of a submodule writes, where its class lives in a module the run reads only when asked.

``self.sub.reset()``, with ``class Sub`` in ``sub.py`` beside the model (read from disk when ``model.py`` is
transformed alone, read only when asked when both are: no stream function lives there), runs
``self.norm.reset_running_stats()``. The index records a class's submodules only for the modules it indexes, so
``self.norm`` held nothing known in ``Sub`` and the call was taken to write nothing (the race checker on main: "read
on stream 'side' ... and written in place on stream 'default' ... at sub.py"); so was ``self.layers[0]
.reset_running_stats()`` there, and ``self.bn.reset_running_stats()`` in the model, ``bn`` assigned by a base in
``base.py``. The object's submodules are now read from its class and bases across the run's modules
(``object_submodules.py``, ``class_chain.origins``). Even in one module, the write named ``self.sub.norm`` did not
meet the side call's read, named ``self.sub`` by its first attribute: an attribute chain now holds the chains under
it (``crossing_writes.touches``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source

SUB = """\
from torch import nn


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(3)
        self.layers = nn.ModuleList([nn.BatchNorm1d(3)])

    def reset(self):
        self.norm.reset_running_stats()

    def reset_items(self):
        self.layers[0].reset_running_stats()
"""

BASE = """\
from torch import nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)
"""

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream

from .base import Base
from .sub import Sub


class Model(Base):
    def __init__(self):
        super().__init__()
        self.sub = Sub()
        with torch.no_grad():
            self.sub.norm.running_mean.fill_(2.0)
            self.sub.layers[0].running_mean.fill_(2.0)
            self.bn.running_mean.fill_(2.0)

    @on_stream("side")
    def side_sub(self, x):
        return x * self.sub.norm.running_mean

    @on_stream("side")
    def side_items(self, x):
        return x * self.sub.layers[0].running_mean

    @on_stream("side")
    def side_bn(self, x):
        return x * self.bn.running_mean

    def reset_sub(self, x):
        y = self.side_sub(x)
        z = x * 5
        self.sub.reset()
        self.sub.norm.running_mean.add_(2.0)
        return y + z

    def reset_sub_items(self, x):
        y = self.side_items(x)
        z = x * 5
        self.sub.reset_items()
        self.sub.layers[0].running_mean.add_(2.0)
        return y + z

    def reset_base(self, x):
        y = self.side_bn(x)
        z = x * 5
        self.bn.reset_running_stats()
        self.bn.running_mean.add_(2.0)  # as it was, for the next run
        return y + z
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

WRITES = {"reset_sub": "self.sub.reset()", "reset_sub_items": "self.sub.reset_items()", "reset_base": "self.bn.reset"}


def _package(tmp_path: Path, target: str, alone: bool) -> tuple[str, str, Path]:
    folder = tmp_path / "pkg_lazy_submodules"
    folder.mkdir(exist_ok=True)
    for name, text in {"__init__.py": INIT, "base.py": BASE, "sub.py": SUB, "model.py": MODEL}.items():
        (folder / name).write_text(text, encoding="utf-8")
    entry = Entry(name="lazy_submodules", package=folder.name, path=folder, idioms=(), upstream=(), needs=())
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    name, codes = generated_package(entry, target, out, alone=alone)
    return name, codes["model.py"], out


@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", WRITES)
def test_the_call_waits_and_runs_race_free(tmp_path: Path, method: str, target: str, alone: bool) -> None:
    name, code, out = _package(tmp_path, target, alone)
    if target == "portable":
        body = method_source(code, method)
        assert re.search(r'runtime\.wait\("[\w.]+\.side_\w+\.join"\)', body[: body.index(WRITES[method])]), body
    x = torch.randn(2, 3)
    got = run_generated(name, out, target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)


def test_a_write_under_the_chain_a_side_call_reads_in_one_module() -> None:
    source = MODEL.replace(
        "from .base import Base\nfrom .sub import Sub\n", BASE + SUB.replace("from torch import nn\n", "")
    )
    body = method_source(transform_source(source, path="m.py", target="portable"), "reset_sub")
    assert re.search(r'runtime\.wait\("m\.Model\.side_sub\.join"\)\n\s+self\.sub\.reset\(\)', body), body
