"""Generated imports go where isort and ruff put them, so a formatted file stays formatted."""

from __future__ import annotations

import pytest

from codegen.driver.api import transform_source

_BODY = """

class M(nn.Module):
    @on_stream("side", when="self.on", sync="manual")
    def f(self, x):
        return x * 2

    def forward(self, x):
        y = self.f(x)
        return y
"""


def _head(imports: str, target: str = "portable") -> str:
    """The output's lines up to the first definition."""
    code = transform_source(imports + _BODY, path="m.py", target=target)
    return code[: code.index("\nclass M") if "def _" not in code.split("class M")[0] else code.index("\ndef _")]


@pytest.mark.parametrize(
    "imports,expected",
    [
        # a new standard-library section above the third-party one; `import x` before `from x import y`
        (
            "import torch\nfrom torch import nn\n\nfrom npudsl import on_stream\n",
            "from contextlib import nullcontext\n\nimport torch\nfrom npudsl import runtime\nfrom torch import nn\n\n",
        ),
        # joins an existing standard-library group at its sorted place
        (
            "import os\nimport sys\n\nimport torch\nfrom npudsl import on_stream\nfrom torch import nn\n",
            "import os\nimport sys\nfrom contextlib import nullcontext\n\nimport torch\nfrom npudsl import runtime\n"
            "from torch import nn\n\n",
        ),
        # the project's own modules in a later group: the generated line joins the first (third-party) group
        (
            '"""Doc."""\n\nfrom __future__ import annotations\n\nimport contextlib\n\n'
            "import torch\nfrom torch import nn\n\nimport mypkg.config\nfrom npudsl import on_stream\n",
            '"""Doc."""\n\nfrom __future__ import annotations\n\n'
            "import contextlib\nfrom contextlib import nullcontext\n\n"
            "import torch\nfrom npudsl import runtime\nfrom torch import nn\n\nimport mypkg.config\n\n",
        ),
    ],
)
def test_generated_imports_are_sorted_into_their_sections(imports: str, expected: str) -> None:
    assert _head(imports) == expected


def test_the_files_opening_comment_stays_first() -> None:
    head = _head("# the model's imports\nimport torch\nfrom npudsl import on_stream\nfrom torch import nn\n")
    assert head == (
        "# the model's imports\nfrom contextlib import nullcontext\n\nimport torch\n"
        "from npudsl import runtime\nfrom torch import nn\n\n"
    )


def test_a_comment_above_an_import_stays_with_it() -> None:
    head = _head("import os\n\n# tensors\nimport torch\nfrom npudsl import on_stream\nfrom torch import nn\n")
    assert head == (
        "import os\nfrom contextlib import nullcontext\n\n# tensors\nimport torch\n"
        "from npudsl import runtime\nfrom torch import nn\n\n"
    )


def test_helpers_below_the_imports_get_isorts_spacing() -> None:
    code = transform_source(
        "import torch\nfrom npudsl import on_stream\nfrom torch import nn\n" + _BODY, path="m.py", target="cuda"
    )
    assert code.startswith("from contextlib import nullcontext\n\nimport torch\nfrom torch import nn\n\n# ")
