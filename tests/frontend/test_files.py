"""Files Python runs are files npudsl reads: a byte order mark, deep expressions, very long modules."""

from __future__ import annotations

import ast
from pathlib import Path

from codegen.driver.run import SourceFile, run
from frontend_util import check, cli, codes, transform

_BLOCK = """
from torch import nn

from npudsl import on_stream


class M(nn.Module):
    @on_stream("side")
    def f(self, x):
        return {expression}

    def forward(self, x):
        y = self.f(x)
        z = x + 1
        return y + z
"""

BOM = b"\xef\xbb\xbf"


def test_a_file_with_a_bom_is_read_and_written_back_with_it(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_bytes(BOM + _BLOCK.format(expression="x * 2").lstrip().encode())
    checked = cli("check", str(path))
    assert checked.returncode == 0 and "NPD" not in checked.stdout, checked.stdout + checked.stderr
    done = cli("transform", "--in-place", str(path))
    assert done.returncode == 0, done.stderr
    written = path.read_bytes()
    assert written.startswith(BOM) and not written[3:].startswith(BOM)
    assert b'npu_stream_switch("side", 0)' in written
    assert cli("transform", "--check", str(path)).returncode == 0  # idempotent


def test_positions_in_a_file_with_a_bom_do_not_count_it() -> None:
    source = "\ufeff" + 'from npudsl import on_stream\n@on_stream("bad tag")\ndef f(x):\n    return x\n'
    code, diagnostics = transform(source)
    assert code == source
    assert codes(diagnostics) == codes(check(source)) == ["2:12 NPD102"]


def test_a_600_term_expression_transforms_as_check_says(tmp_path: Path) -> None:
    source = _BLOCK.format(expression=" + ".join(["x"] * 600)).lstrip()
    assert check(source) == ()
    code, diagnostics = transform(source)
    assert diagnostics == ()
    assert 'npu_stream_switch("side", 0)' in code and ast.parse(code)
    assert transform(code)[0] == code
    path = tmp_path / "deep.py"
    path.write_text(source, encoding="utf-8")
    assert cli("check", str(path)).returncode == 0
    done = cli("transform", str(path), "-o", str(tmp_path / "out"))
    assert done.returncode == 0 and "internal error" not in done.stderr, done.stderr
    assert (tmp_path / "out" / "deep.py").read_text() == code.replace('"m.M.', '"deep.M.')  # event tags


def _long_module(lines: int) -> tuple[str, int]:
    """A module of about ``lines`` lines: plain functions, and a decorated class every hundredth block."""
    blocks, decorated = ["import torch\nfrom torch import nn\n\nfrom npudsl import on_stream\n"], 0
    while sum(b.count("\n") for b in blocks) < lines:
        i = len(blocks)
        if i % 100:
            blocks.append(
                f"\n\ndef helper_{i}(x, y=None):\n    a = x + {i}\n    if y is not None:\n"
                "        a = a * y\n    for k in range(3):\n        a = a - k\n    return a\n"
            )
        else:
            decorated += 1
            blocks.append(
                "\n"
                + _BLOCK.split("\n\n\n", 1)[1].replace("class M", f"class M{i}").format(expression=f"helper_{i - 1}(x)")
            )
    return "".join(blocks), decorated


def test_a_46k_line_module_transforms() -> None:
    source, decorated = _long_module(46_000)
    assert source.count("\n") >= 46_000
    results = run([SourceFile(path="long.py", root="long.py", source=source, module="long")], target="aclgraph", jobs=1)
    assert results[0].internal_error is None and not results[0].has_errors
    code = results[0].code
    assert code is not None and code.count('npu_stream_switch("side", 0)') == decorated
    assert code.count("\ndef helper_") == source.count("\ndef helper_")
