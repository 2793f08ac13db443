"""Hypothesis strategies: small decorated modules, spelled as source text, for the property tests."""

from __future__ import annotations

import hypothesis.strategies as st

__all__ = ["decorated_modules"]

_EVENTS = ("a", "b", "c", "ab")
_STREAMS = ("default", "s1", "s2")
_FEW = st.sampled_from((0, 0, 0, 1, 2))  # mostly no events, so that many programs have no error
_AIC = (4, 8, 12, 16, 25)
_AIV = (8, 16, 32, 49)


def _events() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(_EVENTS), min_size=1, max_size=2, unique=True).map(
        lambda names: ", ".join(f'"{n}"' for n in names)
    )


@st.composite
def _decorators(draw: st.DrawFn) -> list[str]:
    found = []
    if draw(st.booleans()):
        sync = draw(st.sampled_from(["", ', sync="manual"']))
        when = draw(st.sampled_from(["", ', when="self.on"', ', when="flag"']))
        found.append(f'@on_stream("{draw(st.sampled_from(_STREAMS))}"{when}{sync})')
    found.extend(f"@after({draw(_events())})" for _ in range(draw(_FEW)))
    found.extend(f"@records({draw(_events())})" for _ in range(draw(_FEW)))
    if draw(st.booleans()):
        found.append(f"@core_limit({draw(st.sampled_from(_AIC))}, {draw(st.sampled_from(_AIV))})")
    if draw(st.booleans()):
        found.append(draw(st.sampled_from(["@keep_output", "@keep_output(clone=True)"])))
    return draw(st.permutations(found))


@st.composite
def _method(draw: st.DrawFn, name: str) -> str:
    lines = [f"    {d}" for d in draw(_decorators())]
    lines += [f"    def {name}(self, x, flag=True):", "        return x * 2"]
    return "\n".join(lines)


@st.composite
def _forward(draw: st.DrawFn, names: list[str]) -> str:
    body = []
    for i, name in enumerate(draw(st.lists(st.sampled_from(names), max_size=4))):
        form = draw(st.sampled_from(["bound", "bare", "nested", "returned"]))
        body.append(
            {
                "bound": f"        v{i} = self.{name}(x)",
                "bare": f"        self.{name}(x)",
                "nested": f"        v{i} = torch.relu(self.{name}(x))",
                "returned": f"        return self.{name}(x)",
            }[form]
        )
        if form == "returned":
            break
    else:
        body.append("        return x")
    return "\n".join(["    def forward(self, x):", *body])


@st.composite
def decorated_modules(draw: st.DrawFn) -> str:
    """A module with one or two classes of decorated methods and a forward that calls some of them."""
    parts = [
        "import torch",
        "from torch import nn",
        "",
        "from npudsl import after, core_limit, keep_output, on_stream, records",
        "",
    ]
    for c in range(draw(st.integers(1, 2))):
        names = [f"m{i}" for i in range(draw(st.integers(1, 4)))]
        parts += ["", f"class Block{c}(nn.Module):", "    on = True", ""]
        parts += [draw(_method(name)) + "\n" for name in names]
        parts.append(draw(_forward(names)))
    return "\n".join(parts) + "\n"
