"""The README's transform excerpt is the tool's real output for the example it names, byte for byte."""

from __future__ import annotations

import re
from pathlib import Path

from codegen.driver.api import transform_source

REPO = Path(__file__).resolve().parents[2]


def test_the_readme_excerpt_is_what_transform_writes() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    excerpt = re.search(r"torchair calls an Ascend engineer.*?```python\n(.*?)```", readme, re.S)
    assert excerpt is not None, "the README lost its transform excerpt"
    source = (REPO / "examples" / "moe_decoder.py").read_text(encoding="utf-8")
    generated = transform_source(source, path="moe_decoder.py", target="aclgraph")
    assert excerpt.group(1) in generated
    assert "def forward(self, x):\n        gate, up = self.gate_up(x).chunk(2, dim=-1)\n" in generated  # untouched
