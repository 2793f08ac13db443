"""Hypothesis strategies: decorated modules that spell npudsl every way a user may, with shadowing and odd names.

Each module computes ``x * EXPECTED`` (a constant it defines), whatever runs on which stream, so a
test can run the generated code and know the answer.
"""

from __future__ import annotations

import keyword

import hypothesis.strategies as st

from npudsl.schedule import DECORATOR_FIELDS

__all__ = ["spelled_modules"]

DECORATORS = tuple(DECORATOR_FIELDS)
_NAMES = (
    "f",
    "g",
    "shared",
    "shared_expert",
    "sharedExpert",
    "fooBar",
    "foo_bar",
    "Done",
    "done",
    "runtime",
    "torchair",
    "nullcontext",
    "out",
    "S",
    "stream",
    "x1",
    "_DONE",
    "forward_",
)
_names = st.sampled_from(_NAMES).filter(lambda n: not keyword.iskeyword(n))


@st.composite
def _spelling(draw: st.DrawFn) -> tuple[list[str], dict[str, str]]:
    """(import lines, decorator -> how it is spelled)."""
    form = draw(
        st.sampled_from(
            [
                "names",
                "aliases",
                "module",
                "module_alias",
                "submodule",
                "from_submodule",
                "star",
                "guarded",
                "type_checking",
                "assigned",
            ]
        )
    )
    plain = {d: d for d in DECORATORS}
    if form == "names":
        return [f"from npudsl import {', '.join(DECORATORS)}"], plain
    if form == "aliases":
        aliases = {d: f"{d[:2].upper()}{i}" for i, d in enumerate(DECORATORS)}
        return [f"from npudsl import {', '.join(f'{d} as {a}' for d, a in aliases.items())}"], aliases
    if form in ("module", "module_alias", "submodule", "from_submodule"):
        prefix = {"module": "npudsl", "module_alias": "nd", "submodule": "npudsl.decorators", "from_submodule": "decs"}[
            form
        ]
        line = {
            "module": "import npudsl",
            "module_alias": "import npudsl as nd",
            "submodule": "import npudsl.decorators",
            "from_submodule": "from npudsl import decorators as decs",
        }
        return [line[form]], {d: f"{prefix}.{d}" for d in DECORATORS}
    if form == "star":
        return ["from npudsl import *  # noqa: F403"], plain
    if form == "guarded":
        fallback = "".join(f"    def {d}(*args, **kwargs):\n        return lambda fn: fn\n" for d in DECORATORS)
        imports = f"from npudsl import {', '.join(DECORATORS)}"
        return [f"try:\n    {imports}\nexcept ImportError:\n{fallback.rstrip()}"], plain
    if form == "type_checking":
        return [
            "from typing import TYPE_CHECKING",
            f"if TYPE_CHECKING:\n    from npudsl import {', '.join(DECORATORS)}"
            "\nelse:\n    from npudsl.decorators import *  # noqa: F403",
        ], plain
    return ["import npudsl", *(f"{d}_ = npudsl.{d}" for d in DECORATORS)], {d: f"{d}_" for d in DECORATORS}


@st.composite
def _method(
    draw: st.DrawFn,
    name: str,
    factor: int,
    spelled: dict[str, str],
    events: tuple[list[str], list[str]],
    tags: list[str],
) -> list[str]:
    lines = []
    if draw(st.booleans()) or events[0] or events[1]:
        when = draw(st.sampled_from(["", ', when="self.on"']))  # automatic sync: manual waits are the user's
        lines.append(f'@{spelled["on_stream"]}("{draw(st.sampled_from(tags))}"{when})')
    lines += [f"@{spelled['after']}({', '.join(map(repr, events[1]))})"] if events[1] else []
    lines += [f"@{spelled['records']}({', '.join(map(repr, events[0]))})"] if events[0] else []
    if draw(st.booleans()):
        lines.append(f"@{spelled['core_limit']}({draw(st.sampled_from([4, 8]))}, {draw(st.sampled_from([8, 16]))})")
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from([f"@{spelled['keep_output']}", f"@{spelled['keep_output']}(clone=True)"])))
    if draw(st.booleans()):
        lines.append('@helpers.on_stream("not-npudsl")')  # another library's on_stream
    lines = draw(st.permutations(lines))
    return [f"    {line}" for line in lines] + [f"    def {name}(self, x):", f"        return x * {factor}", ""]


@st.composite
def _class(draw: st.DrawFn, index: int, spelled: dict[str, str]) -> tuple[list[str], int]:
    """A class of decorated methods and a forward that calls them in order; (lines, what forward multiplies by)."""
    methods = draw(st.lists(_names, min_size=1, max_size=3, unique=True))
    event = draw(st.sampled_from([None, "f", "g", "shared", "Done", "done"]))
    tags = draw(st.lists(st.sampled_from(["side", "s1", "default", "fooBar"]), min_size=1, max_size=2))
    lines = [f"class Block{index}(nn.Module):", "    on = True", ""]
    for i, name in enumerate(methods):
        events = (
            [event] if event and i == 0 and len(methods) > 1 else [],
            [event] if event and i == len(methods) - 1 and len(methods) > 1 else [],
        )
        lines += draw(_method(name, i + 2, spelled, events, tags))
    shadow = draw(
        st.sampled_from(
            [
                "",
                "        on_stream = 3",
                "        def records(fn):\n            return fn\n\n"
                "        @records\n        def local(v):\n            return v\n",
            ]
        )
    )
    body = [shadow] if shadow else []
    for i, name in enumerate(methods):
        body.append(f"        v{i} = self.{name}(x)")
    total = " + ".join(["x", *(f"v{i}" for i in range(len(methods)))])
    lines += ["    def forward(self, x):", *body, f"        return {total}", "", ""]
    return lines, 1 + sum(range(2, len(methods) + 2))


@st.composite
def spelled_modules(draw: st.DrawFn) -> str:
    imports, spelled = draw(_spelling())
    parts = [
        "import torch",
        "from torch import nn",
        "",
        *imports,
        "",
        "",
        "class helpers:",
        "    @staticmethod",
        "    def on_stream(*args, **kwargs):",
        "        return lambda fn: fn",
        "",
        "",
    ]
    factors = []
    roots = sorted({v.split(".")[0] for v in spelled.values()} - {"npudsl", "nd", "decs"})
    shadow = draw(st.sampled_from([None, *roots])) if roots else None
    between = draw(st.booleans())  # before the second class: one spelling, two meanings (NPD110)
    for c in range(draw(st.integers(1, 2))):
        if c == 1 and shadow and between:  # an identity decorator, bare or called
            parts += [
                f"def {shadow}(*args, **kwargs):",
                "    if len(args) == 1 and callable(args[0]):",
                "        return args[0]",
                "    return lambda fn: fn",
                "",
                "",
            ]
        lines, factor = draw(_class(c, spelled))
        parts += lines
        factors.append(factor)
    if shadow and not between:  # the user's own function of the same name, after every use
        parts += [f"def {shadow}(*args, **kwargs):", "    return args", "", ""]
    parts.append(f"EXPECTED = {factors}")
    return "\n".join(parts) + "\n"
