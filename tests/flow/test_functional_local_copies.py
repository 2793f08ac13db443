"""A write through a parameter's name lands on the body's own copy only where the copy surely holds the name.

``F.gaussian_nll_loss`` runs ``var = var.clone()`` and then ``var.clamp_(...)``: the clamp writes the clone. A copy
made only under an ``if``, a view (``var.view(-1)``, ``torch.unsqueeze(var, -1)``), or a copy followed by another
binding of the name (a loop may bring it back) leaves the write on the caller's tensor
(``functional_local_copies.py``).
"""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow.functional_local_copies import copied_before

CASES = {
    "var = var.clone()\nvar.clamp_(min=1)": True,
    "var = var * 2\nvar.clamp_(min=1)": True,
    "with guard():\n    var = var.clone()\n    var.clamp_(min=1)": True,
    "var.clamp_(min=1)": False,
    "if c:\n    var = var.clone()\nvar.clamp_(min=1)": False,
    "var = var.view(-1)\nvar.clamp_(min=1)": False,
    "var = torch.unsqueeze(var, -1)\nvar.clamp_(min=1)": False,
    "var = var.contiguous()\nvar.clamp_(min=1)": False,
    "for _ in range(2):\n    var.clamp_(min=1)\n    var = var.clone()": False,
    "var = var.clone()\nfor v in xs:\n    var.clamp_(min=1)\n    var = v": False,
}


@pytest.mark.parametrize("body", CASES)
def test_the_write_lands_on_a_copy(body: str) -> None:
    source = "def f(var, c, xs):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    fn = ast.parse(source).body[0]
    assert isinstance(fn, ast.FunctionDef)
    write = next(n for n in ast.walk(fn) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "clamp_")
    assert copied_before(fn, "var", write) is CASES[body]
