"""Decorator arguments: any bad one is a positioned diagnostic; constants and dotted core counts are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from frontend_util import check, cli, codes, load, transform, write_tree

_BLOCK = """
from torch import nn

from npudsl import core_limit, on_stream

{prelude}

class M(nn.Module):
    @on_stream({stream})
    @core_limit({cores})
    def f(self, x):
        return x * 2

    def forward(self, x):
        y = self.f(x)
        z = x + 1
        return y + z
"""


def _module(stream: str = '"side"', cores: str = "8, 16", prelude: str = "") -> str:
    return _BLOCK.format(stream=stream, cores=cores, prelude=prelude)


@pytest.mark.parametrize(
    "argument",
    [
        "{[]: 1}",
        "{{}}",
        "[[]]",
        "{1: [2]}",
        "-{1}",
        "f(x)",
        "*args",
        "...",
        "b'bytes'",
        "1.5",
        "(1, 2)",
        "'a' 'b' if x else 'c'",
        "x.y",
        "lambda: 1",
    ],
)
def test_any_bad_argument_is_a_positioned_diagnostic(argument: str) -> None:
    source = _module(stream=argument)
    line = source.splitlines().index(f"    @on_stream({argument})") - source.startswith("\n") + 1
    code, diagnostics = transform(source)
    assert code.strip() == source.strip()
    found = [d for d in diagnostics if d.severity.value == "error"]
    assert len(found) == 1 and found[0].line == line and found[0].col == 16, codes(diagnostics)
    assert found[0].code in ("NPD101", "NPD102")
    assert codes(check(source)) == codes(diagnostics)


def test_one_bad_file_never_stops_the_others(tmp_path: Path) -> None:
    write_tree(tmp_path / "src", {"bad.py": _module(stream="{[]: 1}"), "good.py": _module()})
    done = cli("transform", str(tmp_path / "src"), "-o", str(tmp_path / "out"))
    assert done.returncode == 1, done.stderr
    assert "bad.py:8:16: NPD101" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "out" / "bad.py").exists()
    assert "npu_stream_switch" in (tmp_path / "out" / "good.py").read_text()


def test_module_level_constants_are_read() -> None:
    source = _module(
        stream="STREAM_SHARED, PRIORITY",
        cores="aicore=CUBE, vector=16",
        prelude='STREAM_SHARED = "shared"\nPRIORITY: int = 0\nCUBE = 8\n',
    )
    code, diagnostics = transform(source)
    assert [d for d in diagnostics if d.severity.value == "error"] == []
    assert 'torchair.scope.npu_stream_switch("shared", 0)' in code
    assert "torchair.scope.limit_core_num(8, 16)" in code
    assert 'STREAM_SHARED = "shared"' in code  # the user's constant stays


def test_constants_unpacked_from_a_display_are_read() -> None:
    """``CUBE, VECTOR = 8, 16`` binds each name once to a literal, as engines write a core split (DeepSeek-V4's
    ``cmpr_aic_num``/``cmpr_aiv_num``)."""
    source = _module(
        stream="STREAM_SHARED", cores="CUBE, VECTOR", prelude='STREAM_SHARED, CUBE, VECTOR = "shared", 8, 16\n'
    )
    code, diagnostics = transform(source)
    assert [d for d in diagnostics if d.severity.value == "error"] == []
    assert 'torchair.scope.npu_stream_switch("shared", 0)' in code
    assert "torchair.scope.limit_core_num(8, 16)" in code


@pytest.mark.parametrize(
    "prelude,why",
    [
        ('TAG = "a"\nTAG = "b"\n', "bound more than once (lines 5, 6)"),
        ('if True:\n    TAG = "a"\n', "inside a block"),
        ('TAG = "a".upper()\n', "to an expression, not to a literal"),
        ("from config import TAG\n", "but not as TAG = <literal>"),
        ('TAG, *REST = "a", "b"\n', "but not as TAG = <literal>"),
        ('PAIR = ("a", "b")\nTAG, OTHER = PAIR\n', "but not as TAG = <literal>"),
        ('TAG, OTHER = "a".upper(), "b"\n', "to an expression, not to a literal"),
        ('TAG, OTHER = OTHER, "b"\n', "to an expression, not to a literal"),
        ('TAG, TAG = "a", "b"\n', "bound more than once"),
        ('TAG = "a"\n\n\ndef f():\n    global TAG\n    TAG = "b"\n', "a function rebinds it (global)"),
        ('TAG = "a"\nfrom config import *\nfrom npudsl import core_limit, on_stream\n', "a star import may rebind it"),
        ("", "is not bound at module level"),
    ],
)
def test_constants_that_cannot_be_read_with_certainty(prelude: str, why: str) -> None:
    source = _module(stream="TAG", prelude=prelude)
    diagnostics = [d for d in transform(source)[1] if d.severity.value == "error"]
    assert [(d.code, d.col) for d in diagnostics] == [("NPD101", 16)]
    assert why in diagnostics[0].message


TARGET_SPELLINGS = {
    "aclgraph": "torchair.scope.limit_core_num(self.cfg.aic, cores)",
    "ge": "torchair.scope.limit_core_num(self.cfg.aic, cores)",
    "npugraph_ex": "torch.npu.npugraph_ex.scope.limit_core_num(self.cfg.aic, cores)",
    "portable": "runtime.core_limit(self.cfg.aic, cores)",
}


@pytest.mark.parametrize("target", TARGET_SPELLINGS)
def test_dotted_counts_are_spelled_as_their_expression(target: str) -> None:
    source = _module(cores='"self.cfg.aic", "cores"').replace("def f(self, x):", "def f(self, x, cores=16):")
    code, diagnostics = transform(source, target=target)
    assert [d.code for d in diagnostics if d.severity.value == "error"] == []
    assert "NPD510" in [d.code for d in diagnostics]
    assert TARGET_SPELLINGS[target] in code


def test_dotted_counts_on_cuda_are_ignored_like_numbers() -> None:
    code, diagnostics = transform(_module(cores='"self.cfg.aic", 16'), target="cuda")
    assert "cfg" not in code
    assert {"NPD510", "NPD590"} <= {d.code for d in diagnostics}


def test_check_skips_what_it_cannot_know() -> None:
    source = _module(cores='30, "self.cfg.aiv"')
    found = codes(check(source))
    assert "9:6 NPD301" in found and "9:6 NPD510" in found  # the known count is still checked
    assert "NPD301" not in " ".join(codes(check(_module(cores='"self.cfg.aic", "self.cfg.aiv"'))))


def test_portable_output_reads_dotted_counts_at_call_time() -> None:
    torch = pytest.importorskip("torch")
    from npudsl import runtime

    source = _module(cores='"self.cfg.aic", "cores"').replace("def f(self, x):", "def f(self, x, cores=16):")
    module = load(transform(source, target="portable")[0], "dotted_counts_portable")
    model = module.M()
    model.cfg = type("Cfg", (), {"aic": 4})()
    seen: list[tuple[int, int]] = []
    real = runtime.core_limit

    def spy(aicore: int, vector: int):  # type: ignore[no-untyped-def]
        seen.append((aicore, vector))
        return real(aicore, vector)

    module.runtime.core_limit = spy
    try:
        x = torch.ones(2)
        assert torch.equal(model(x), x * 2 + x + 1)
    finally:
        module.runtime.core_limit = real
    assert seen == [(4, 16)]
