"""Two guards are one only where the submodule's class is the module's: not a class ``__init__`` is handed.

``guard_alias.py`` gives ``self.shared.multistream`` and ``self.multistream`` one key when the layer passes its
constructor argument to ``Shared(...)`` and ``Shared.__init__`` stores it. With ``def __init__(self, hidden,
multistream, Shared=Inverted)``, ``Shared`` is the parameter, any class (here one storing ``not multistream``): on
main it was read as the module's ``Shared`` and the two flags took one key, so the planner could take a call of the
layer's and one of the submodule's to fork on the same paths while they do not. A call of a name ``__init__`` binds
itself is no class the module shows now (``scan.own_names``): two keys, the planner joins (always safe). A submodule a
factory function makes (``self.shared = make_shared(hidden, multistream)``) keeps two keys too: the argument's path
through the factory is not followed.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.guard_alias import guard_aliases

SOURCE = """
class Shared(nn.Module):
    def __init__(self, hidden, multistream):
        super().__init__()
        self.multistream = multistream


class Inverted(nn.Module):
    def __init__(self, hidden, multistream):
        super().__init__()
        self.multistream = not multistream


def make_shared(hidden, multistream) -> Shared:
    return Shared(hidden, multistream)


class Layer(nn.Module):
    def __init__(self, hidden, multistream, PARAMETER):
        super().__init__()
        self.multistream = multistream
        self.shared = BUILD(hidden, multistream)
"""


def _aliases(parameter: str, build: str) -> dict[str, str]:
    return guard_aliases(ast.parse(SOURCE.replace("PARAMETER", parameter).replace("BUILD", build)), "Layer", "self")


def test_the_modules_class_is_one_guard() -> None:
    assert _aliases("other=None", "Shared") == {"self.shared.multistream": "self.multistream"}


def test_a_class_the_layer_is_handed_keeps_two_guards() -> None:
    assert _aliases("Shared=Inverted", "Shared") == {}  # on main: one key


def test_a_factory_keeps_two_guards() -> None:
    assert _aliases("other=None", "make_shared") == {}
