"""Which class each submodule of an object holds, a factory function of the run read as the class it makes.

``class_chain.submodule_classes`` is the one answer every reader of an object's submodules asks (``object_chains``,
``distinct_items``, ``state_reach``, ``ge_made_by``, ``local_returns``, ``forward_of``): the class ``__init__`` of
the class, or of a base the run holds (``super().__init__()``), assigns, with the module that names it, where a call
of a factory of the run (``self.up = make(d)``, ``def make(d) -> Up: return Up()``) stands for the class it makes and
a factory handed to a base (``super().__init__(make)``, ``self.f = f(d)`` there) for its class too. A call of a name
``__init__`` binds itself (``def __init__(self, layer=Bump): self.mid = layer()``) is no known class, even where the
module defines a ``layer``; a factory in a module the run does not hold stays its name (no class: safe). On main,
``forward_of`` read the shadowing parameter as the module's factory, and a factory handed by name, or one returning a
local it bound once, as nothing.
"""

from __future__ import annotations

from codegen.index.class_chain import forward_of
from codegen.index.factory_made import made_by
from codegen.index.index import build_index

SHAPES = """\
from torch import nn

from .layers import Up


def make(d: int) -> Up:
    return Up()


def bound(d: int) -> Up:
    layer = Up()
    layer.reset()
    return layer


def rebound(d: int) -> Up:
    layer = Up()
    layer = nn.Identity()
    return layer


def given(layer: Up) -> Up:
    return layer
"""

LAYERS = """\
from torch import nn


class Up(nn.Module):
    def reset(self):
        pass

    def forward(self, x):
        return x * 2


class Bump(nn.Module):
    def forward(self, t):
        return t.mul_(2)
"""

MODEL = """\
from torch import nn

from .layers import Bump, Up
from .shapes import bound, make


def layer() -> Up:
    return Up()


class Base(nn.Module):
    def __init__(self, f, d: int):
        super().__init__()
        self.f = f(d)
        self.based = make(d)


class Model(Base):
    def __init__(self, d: int = 3, layer=Bump):
        super().__init__(make, d)
        self.up = make(d)
        self.kept = bound(d)
        self.mid = layer()
"""

FILES = {"layers.py": LAYERS, "shapes.py": SHAPES, "model.py": MODEL}
PKG = "pkg_submodule_classes"


def _index(files: dict[str, str] = FILES) -> object:
    return build_index([(f"{PKG}.{name.removesuffix('.py')}", source) for name, source in files.items()])


def test_a_returned_local_bound_once_is_the_class_made() -> None:
    index, shapes = _index(), f"{PKG}.shapes"
    assert made_by(index, shapes, "bound") == (shapes, "Up")
    assert made_by(index, shapes, "rebound") is None
    assert made_by(index, shapes, "given") is None


def test_each_submodule_reaches_the_forward_of_the_class_made() -> None:
    index, model, layers = _index(), f"{PKG}.model", f"{PKG}.layers"
    up = (layers, "Up.forward")
    assert forward_of(index, model, "Model", "up") == up
    assert forward_of(index, model, "Model", "based") == up  # a base's ``__init__``
    assert forward_of(index, model, "Model", "f") == up  # a factory handed to the base by name
    assert forward_of(index, model, "Model", "kept") == up  # on main: None


def test_a_parameter_shadowing_a_factory_makes_no_known_class() -> None:
    """``self.mid = layer()`` calls the parameter (``Bump`` by default), not the module's ``layer``."""
    index = _index()
    assert forward_of(index, f"{PKG}.model", "Model", "mid") is None  # on main: ``Up.forward``


def test_a_factory_the_run_does_not_hold_stays_unknown() -> None:
    index = _index({"layers.py": LAYERS, "model.py": MODEL})
    assert forward_of(index, f"{PKG}.model", "Model", "up") == ("", "")  # the package's module: nothing known
