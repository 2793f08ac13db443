"""A submodule built by a factory function of the run holds the class the factory makes (``factory_made.py``).

``self.shared = expert(d)`` with ``def expert(d) -> Expert: return Expert(d)`` in ``shapes.py`` (imported by name,
through a module alias ``s.expert``, re-exported by the package's ``__init__``, or defined in the caller's own
module), ``Expert.forward`` on stream ``"side"``: before, the index recorded the name called, ``self.shared(x)``
reached no class, and the call ran on its caller's stream (no overlap). Now it is forked onto ``"side"`` and joined
where its result is read, race-free and exact, transformed together; each file alone keeps it on its caller's stream.

Two more facts follow the factory. What its class writes of the argument: ``self.mid = _bump()`` of a class whose
``forward`` doubles its input in place was read as writing nothing (a factory of the module), so the caller ran it
while the side stream still read that input (a race the checker reports on main); and a factory of ``nn.Linear``
reads its input as torch's table says, as a direct ``nn.Linear(...)`` does (no ``record_stream`` where the caller
reads the tensor again through it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.driver.run import index_run, read_sources, run
from codegen.index.factory_made import made_by
from npudsl.testing.targets import run_checked

LAYERS = """\
from torch import nn
from npudsl import on_stream


class Expert(nn.Module):
    @on_stream("side")
    def forward(self, x):
        return x * 2
"""

SHAPES = """\
from torch import nn

from .layers import Expert


def expert(d: int) -> Expert:
    return Expert()


def nested(d: int) -> Expert:
    return expert(d)


def linear(d: int) -> nn.Linear:
    return nn.Linear(d, d)


def either(d: int) -> nn.Module:
    if d > 2:
        return Expert()
    return nn.Identity()


def given(cls, d: int):
    return cls()
"""

PLAIN = """\
from torch import nn

from .shapes import expert


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = expert(3)

    def forward(self, x):
        y = self.shared(x)
        z = x * 5
        return y + z
"""

INIT = """\
from .shapes import expert as reexported
from . import model, plain


def build(method):
    return plain.Plain() if method == "plain" else model.Caller(method)
"""

MODEL = """\
import torch
from torch import nn

from . import shapes as s
from . import reexported
from .layers import Expert
from .shapes import either, expert, nested


def local_expert(d: int) -> Expert:
    return Expert()


class Model(nn.Module):
    def __init__(self, d=3):
        super().__init__()
        self.imported = expert(d)
        self.aliased = s.expert(d)
        self.nested = nested(d)
        self.local = local_expert(d)
        self.again = reexported(d)
        self.mixed = either(d)

    def by_import(self, x):
        y = self.imported(x)
        z = x * 5
        return y + z

    def by_alias(self, x):
        y = self.aliased(x)
        z = x * 5
        return y + z

    def by_nested(self, x):
        y = self.nested(x)
        z = x * 5
        return y + z

    def by_local(self, x):
        y = self.local(x)
        z = x * 5
        return y + z

    def by_reexport(self, x):
        y = self.again(x)
        z = x * 5
        return y + z

    def by_mixed(self, x):
        y = self.mixed(x)
        z = x * 5
        return y + z
""" + caller_source()

FILES = {"__init__.py": INIT, "layers.py": LAYERS, "shapes.py": SHAPES, "model.py": MODEL, "plain.py": PLAIN}
MADE = ["by_import", "by_alias", "by_nested", "by_local", "by_reexport"]
SWITCH = {"portable": 'runtime.stream("side"', "aclgraph": 'npu_stream_switch("side"'}


def _entry(tmp_path: Path, files: dict[str, str] = FILES) -> Entry:
    folder = tmp_path / "pkg_factory_made"
    folder.mkdir(exist_ok=True)
    for name, source in files.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name="factory_made", package="pkg_factory_made", path=folder, idioms=(), upstream=(), needs=())


def _generated(tmp_path: Path, target: str, *, alone: bool, file: str = "model.py") -> tuple[str, str]:
    (tmp_path / "out").mkdir(exist_ok=True)
    name, codes = generated_package(_entry(tmp_path), target, tmp_path / "out", alone=alone)
    return name, codes[file]


def test_the_index_reads_the_class_each_factory_makes(tmp_path: Path) -> None:
    """Imported, through a module alias or a re-export, nested, or the module's own; a factory of two classes or
    of a class it is given makes none known."""
    folder = _entry(tmp_path).path
    index = index_run(read_sources((str(folder / n), str(folder)) for n in FILES))
    model, shapes = "pkg_factory_made.model", "pkg_factory_made.shapes"
    assert made_by(index, model, "expert") == (shapes, "Expert")
    assert made_by(index, model, "s.expert") == (shapes, "Expert")
    assert made_by(index, model, "nested") == (shapes, "Expert")
    assert made_by(index, model, "reexported") == (shapes, "Expert")
    assert made_by(index, model, "local_expert") == (model, "Expert")
    assert made_by(index, shapes, "linear") == (shapes, "nn.Linear")
    assert made_by(index, model, "either") is None
    assert made_by(index, shapes, "given") is None
    assert made_by(index, model, "Expert") is None  # a class, not a factory


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", MADE)
def test_the_call_is_planned_together(tmp_path: Path, method: str, target: str) -> None:
    """Switched onto ``"side"``, with the caller's own work (``z = x * 5``) between the call and its join."""
    body = method_source(_generated(tmp_path, target, alone=False)[1], method)
    call = body.index("y = self.")
    assert body.index(SWITCH[target]) < call < body.index("z = x * 5")
    assert "wait" in body[body.index("z = x * 5") :].split("return y + z")[0]


def test_a_file_naming_only_the_factory_is_searched_as_a_call_site(tmp_path: Path) -> None:
    """``plain.py`` names neither npudsl nor ``Expert``, only ``expert``: its call is found and planned."""
    body = method_source(_generated(tmp_path, "portable", alone=False, file="plain.py")[1], "forward")
    assert body.index(SWITCH["portable"]) < body.index("y = self.shared(x)") < body.index("z = x * 5")


def test_a_factory_of_two_classes_leaves_the_call_on_its_callers_stream(tmp_path: Path) -> None:
    assert "runtime." not in method_source(_generated(tmp_path, "portable", alone=False)[1], "by_mixed")


@pytest.mark.parametrize("method", MADE)
def test_each_file_alone_leaves_the_call_on_its_callers_stream(tmp_path: Path, method: str) -> None:
    """``model.py`` alone does not hold ``Expert``'s stream function: the call is nobody's."""
    assert "runtime." not in method_source(_generated(tmp_path, "portable", alone=True)[1], method)


def test_without_the_factorys_module_the_call_stays_unknown(tmp_path: Path) -> None:
    """``shapes.py`` neither in the run nor on disk: ``expert`` may make anything, the call stays where it was."""
    folder = _entry(tmp_path, {k: v for k, v in FILES.items() if k != "shapes.py"}).path
    files = read_sources((str(folder / n), str(folder)) for n in ("layers.py", "model.py"))
    code = next(r.code for r in run(files, target="portable", jobs=1) if r.file.path.endswith("model.py"))
    assert code is not None
    for method in ("by_import", "by_alias", "by_nested", "by_reexport"):
        assert "runtime." not in method_source(code, method)
    assert SWITCH["portable"] in method_source(code, "by_local")  # the module's own factory is still read


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"])
@pytest.mark.parametrize("method", [*MADE, "by_mixed", "plain"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str, alone: bool) -> None:
    """The same math as on one stream: ``x * 2`` plus ``x * 5`` (``by_mixed``: ``Expert`` as well, ``d`` is 3)."""
    name, _ = _generated(tmp_path, target, alone=alone)
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), eager_first=native, method=method)
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)


WRITER = """\
import torch
from torch import nn
from npudsl import on_stream


class Bump(nn.Module):
    def forward(self, t):
        t.mul_(2)
        return t


def _bump() -> Bump:
    return Bump()


def _linear(d: int) -> nn.Linear:
    return nn.Linear(d, d, bias=False)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.mid = _bump()
        self.proj = _linear(3)
        self.direct = nn.Linear(3, 3, bias=False)

    @on_stream("side")
    def side(self, c):
        return c.tanh()

    def written(self, x):
        a = self.side(x)
        h = self.mid(x)
        return h + a

    def _held(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def _direct_held(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def by_layer(self, x):
        c = x * 1
        out = self._held(x, c)
        return out + self.proj(c)

    def by_direct_layer(self, x):
        c = x * 1
        out = self._direct_held(x, c)
        return out + self.direct(c)
""" + caller_source()

_KEEP = 'runtime.record_stream(c, "side")'


def test_the_factory_made_layer_that_writes_its_input_waits_for_the_side_read() -> None:
    """``self.mid(x)`` doubles ``x`` in place: it runs once the side stream's ``x.tanh()`` is done."""
    body = method_source(transform_source(WRITER, path="m.py", target="portable"), "written")
    assert "runtime.wait" not in body.split("h = self.mid(x)")[1]  # on main: the side's join waited after it


@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"])
def test_the_in_place_write_is_race_free_and_exact(target: str) -> None:
    code = transform_source(WRITER, path="m.py", target=target)
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    got = run_checked(code, target, lambda m: m.Caller("written"), (x,), eager_first=native)
    torch.testing.assert_close(got, x * 2 + x.tanh())


def test_a_factory_made_linear_reads_its_input_as_a_direct_one() -> None:
    """``self.proj(c)`` reads ``c`` after the call (torch's table for ``nn.Linear``): no keep, as for
    ``self.direct(c)``."""
    code = transform_source(WRITER, path="m.py", target="portable")
    assert _KEEP not in method_source(code, "_direct_held")
    assert _KEEP not in method_source(code, "_held")
