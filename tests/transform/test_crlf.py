"""A file with CRLF line ends gets CRLF in every line npudsl writes into it (imports, helpers, call sites)."""

from __future__ import annotations

import pytest

from codegen.driver.api import transform_source

SOURCE = (
    "import torch\r\nfrom torch import nn\r\nfrom npudsl import on_stream\r\n\r\n\r\nclass M(nn.Module):\r\n"
    '    @on_stream("side")\r\n    def f(self, x):\r\n        return x * 2\r\n\r\n    def forward(self, x):\r\n'
    "        y = self.f(x)\r\n        z = x + 1\r\n        return y + z\r\n"
)


@pytest.mark.parametrize("target", ["aclgraph", "ge", "npugraph_ex", "cuda", "portable"])
def test_every_written_line_ends_as_the_files_lines_do(target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    assert code != SOURCE and code.endswith("\r\n")
    assert code.count("\n") == code.count("\r\n"), [line for line in code.split("\n") if not line.endswith("\r")]
    assert transform_source(code, path="m.py", target=target) == code
