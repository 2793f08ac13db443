"""``npudsl.compile`` keeps the user's model theirs (CONTRACT section 5): ``isinstance`` holds, ``torch.save``
loads in a fresh process, and a script's top-level code never runs a second time."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

MODEL = """
import torch
from torch import nn
from npudsl import on_stream

print("top level ran", flush=True)


@on_stream("side")
class Side(nn.Module):
    def forward(self, x):
        return x * 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = Side()

    def forward(self, x):
        s = self.side(x)
        y = x + 1
        return y + s
"""

SCRIPT = (
    MODEL
    + """

if __name__ == "__main__":
    import sys
    import npudsl
    model = Net()
    out = npudsl.compile(model, fullgraph=True)(torch.ones(2))
    assert isinstance(model, Net) and isinstance(model.side, Side) and type(model.side) is not Side
    print("out", out.tolist())
"""
)

SAVE = """
import sys
import torch
import npudsl
from netmodule import Net, Side
model = Net()
out = npudsl.compile(model, fullgraph=True)(torch.ones(2))
assert isinstance(model.side, Side) and type(model.side) is not Side
torch.save(model, sys.argv[1])
"""

LOAD = """
import sys
import torch
model = torch.load(sys.argv[1], weights_only=False)
print(type(model).__module__, type(model.side).__qualname__, model(torch.ones(2)).tolist())
"""


def _python(code: str, cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_scripts_top_level_runs_once(tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["top level ran", "out [4.0, 4.0]"]


def test_a_compiled_model_saves_as_the_users_class_and_loads_in_a_fresh_process(tmp_path: Path) -> None:
    (tmp_path / "netmodule.py").write_text(MODEL, encoding="utf-8")
    saved = tmp_path / "model.pt"
    _python(SAVE, tmp_path, str(saved))
    assert _python(LOAD, tmp_path, str(saved)).splitlines()[-1] == "netmodule Side [4.0, 4.0]"


SHARED = """
from torch import nn
from npudsl import on_stream


@on_stream("shared")
class Shared(nn.Module):
    def forward(self, x):
        return x * 2
"""

LAYER = """
from torch import nn
from .shared import Shared


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def forward(self, x):
        s = self.shared(x)
        y = x + 1
        return y + s
"""

COMPILE = """
import json
import sys
import torch
import npudsl
from npudsl.runtime import loader
from pkg.layer import Layer
model = Layer()
out = npudsl.compile(model, fullgraph=True)(torch.ones(2))
sources = {path.rsplit("/", 1)[1]: code for path, _, code in loader.transformed_sources(loader.run_roots(model), "portable")}
print(json.dumps({"out": out.tolist(), "sources": sources}))
"""  # noqa: E501 (a program kept as written)


def test_compile_runs_exactly_what_the_cli_writes_for_the_package(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "shared.py").write_text(SHARED, encoding="utf-8")
    (package / "layer.py").write_text(LAYER, encoding="utf-8")
    import json

    result = json.loads(_python(COMPILE, tmp_path).splitlines()[-1])
    subprocess.run(
        [sys.executable, "-m", "npudsl", "transform", "pkg", "-o", "out", "--target", "portable"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    written = {name: (tmp_path / "out" / name).read_text(encoding="utf-8") for name in result["sources"]}
    assert result["out"] == [4.0, 4.0]
    assert set(written) == {"shared.py", "layer.py"} and written == result["sources"]
    # the caller in the other file joins
    assert 'runtime.wait("pkg.shared.Shared.forward.join")' in written["layer.py"]
