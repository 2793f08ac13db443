"""A method of a torch module that writes its parameters or buffers, called while a side call reads them.

``y = self.side(x)``, whose body reads ``self.norm.running_mean``, then ``self.norm.reset_running_stats()`` on the
caller's stream: torch's classes were taken to write nothing of their module, so the reset ran while the side stream
could still read the buffer (the race checker on main: "read on stream 'side' ... and written in place on stream
'default' with no wait in between"). So did ``self.ln.reset_parameters()`` (``ones_`` into ``weight``), the same
method inherited by the caller's own class (``class Model(nn.LayerNorm)``) or a submodule's (``class
Norm(nn.LayerNorm)``, in this module or a sibling of the run), or called on a module a factory of the module makes,
and a batch norm's ``forward`` in training (``num_batches_tracked.add_(1)``, the running stats). Which methods
write is read from torch's sources (``torch_module_methods_build.py``): the call now waits for the side call first.
Methods that write nothing (``self.ln(x)``) keep the overlap. The table is rebuilt from the pinned torch and
compared.
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
from codegen.lower.flow.torch_module_methods import torch_method_writes
from codegen.lower.flow.torch_module_methods_build import TABLE, build
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


def _layer_norm():
    return nn.LayerNorm(3)


class Norm(nn.LayerNorm):
    pass


class Model(nn.LayerNorm):
    def __init__(self):
        super().__init__(3)
        self.made = _layer_norm()
        self.derived = Norm(3)
        self.norm = nn.BatchNorm1d(3)
        self.ln = nn.LayerNorm(3)
        with torch.no_grad():
            self.norm.running_mean.fill_(2.0)
            self.ln.weight.fill_(2.0)
            self.weight.fill_(2.0)
            self.made.weight.fill_(2.0)
            self.derived.weight.fill_(2.0)

    @on_stream("side")
    def side_stats(self, x):
        return x * self.norm.running_mean

    @on_stream("side")
    def side_ln(self, x):
        return x * self.ln.weight

    @on_stream("side")
    def side_own(self, x):
        return x * self.weight

    @on_stream("side")
    def side_made(self, x):
        return x * self.made.weight

    @on_stream("side")
    def side_derived(self, x):
        return x * self.derived.weight

    def reset_made(self, x):
        y = self.side_made(x)
        z = x * 5
        self.made.reset_parameters()
        return y + z

    def reset_derived(self, x):
        y = self.side_derived(x)
        z = x * 5
        self.derived.reset_parameters()
        return y + z

    def reset_stats(self, x):
        y = self.side_stats(x)
        z = x * 5
        self.norm.reset_running_stats()
        return y + z

    def reset_ln(self, x):
        y = self.side_ln(x)
        z = x * 5
        self.ln.reset_parameters()
        return y + z

    def reset_own(self, x):
        y = self.side_own(x)
        z = x * 5
        self.reset_parameters()
        return y + z

    def batch_norm(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = self.norm(z)
        return y + z + w * 0

    def layer_norm(self, x):
        y = self.side_ln(x)
        z = x * 5
        w = self.ln(z)
        return y + z + w * 0
""" + caller_source()

WRITES = {
    "reset_stats": "self.norm.reset_running_stats()",
    "reset_ln": "self.ln.reset_parameters()",
    "reset_own": "self.reset_parameters()",
    "batch_norm": "w = self.norm(z)",
    "reset_made": "self.made.reset_parameters()",  # made by a factory of the module returning a torch module
    "reset_derived": "self.derived.reset_parameters()",  # a class of the run inheriting it from torch
}
APART = {"layer_norm": "w = self.ln(z)"}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_the_table_is_torchs() -> None:
    assert TABLE.read_text(encoding="utf-8") == build(), "run: python -m codegen.lower.flow.torch_module_methods_build"


def test_what_the_table_says() -> None:
    assert torch_method_writes("BatchNorm1d", "reset_running_stats")  # inherited from ``_NormBase``
    assert torch_method_writes("Linear", "reset_parameters") and torch_method_writes("Linear", "to_empty")
    assert torch_method_writes("Linear", "load_state_dict") and torch_method_writes("Linear", "apply")
    assert torch_method_writes("Linear", "zero_grad") and torch_method_writes("BatchNorm1d", "forward")
    assert not torch_method_writes("Linear", "forward") and not torch_method_writes("Linear", "parameters")
    assert torch_method_writes("Linear", "no_such_method")  # an attribute holding a callable: unknown


@pytest.mark.parametrize("method", WRITES)
def test_the_call_waits_for_the_pending_call(method: str) -> None:
    body = _body(method)
    before = body[: body.index(WRITES[method])]
    assert 'runtime.stream("side"' in before and re.search(r'runtime\.wait\("m\.Model\.side_\w+\.join"\)', before)


@pytest.mark.parametrize("method", APART)
def test_other_methods_keep_the_overlap(method: str) -> None:
    body = _body(method)
    assert body.index('runtime.stream("side"') < body.index(APART[method]) < body.rindex("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WRITES, *APART])
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)


NORMS = """\
from torch import nn


class Norm(nn.LayerNorm):
    pass
"""

PACKAGE_MODEL = """\
import torch
from torch import nn
from npudsl import on_stream

from .norms import Norm


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.derived = Norm(3)
        with torch.no_grad():
            self.derived.weight.fill_(2.0)

    @on_stream("side")
    def side_derived(self, x):
        return x * self.derived.weight

    def reset_imported(self, x):
        y = self.side_derived(x)
        z = x * 5
        self.derived.reset_parameters()
        self.derived.weight.mul_(2)
        return y + z
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""


def _package(tmp_path: Path, target: str) -> tuple[str, str]:
    folder = tmp_path / "pkg_torch_base"
    folder.mkdir(exist_ok=True)
    for name, text in {"__init__.py": INIT, "norms.py": NORMS, "model.py": PACKAGE_MODEL}.items():
        (folder / name).write_text(text, encoding="utf-8")
    entry = Entry(name="torch_base", package="pkg_torch_base", path=folder, idioms=(), upstream=(), needs=())
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    name, codes = generated_package(entry, target, out)
    return name, codes["model.py"]


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_a_class_of_another_module_deriving_it_from_torch(tmp_path: Path, target: str) -> None:
    """``class Norm(nn.LayerNorm)`` in a sibling module of the run: its inherited ``reset_parameters`` writes too."""
    name, code = _package(tmp_path, target)
    if target == "portable":
        body = method_source(code, "reset_imported")
        before = body[: body.index("self.derived.reset_parameters()")]
        assert re.search(r'runtime\.wait\("[\w.]+\.side_derived\.join"\)', before)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method="reset_imported")
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)
