"""What a run imports: never torch; libcst only when some file names npudsl (a plain tree starts at once)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_util import REPO, python

SEED = REPO / "examples" / "seed000.py"

_PROBE = """
import json, sys
from npudsl.cli import main
for argv in json.loads(sys.argv[1]):
    code = main(argv)
    print("RAN", code, "torch" in sys.modules, "libcst" in sys.modules, file=sys.stderr)
"""

_API = """
import sys
from codegen.driver.api import transform_source
from codegen.check.rules.pipeline import check_source
from codegen.index.index import build_index
from codegen.driver.run import read_sources, run
from npudsl.devices import DEFAULT_DEVICE
path = sys.argv[1]
source = open(path, encoding="utf-8").read()
assert transform_source(source, path=path) != source
index = build_index([("seed000", source)])
check_source(source, path=path, module_name="seed000", index=index, target="ge", device=DEFAULT_DEVICE)
assert any(r.changed for r in run(read_sources([(path, path)]), target="cuda", jobs=2))
print("API", "torch" in sys.modules, "libcst" in sys.modules)
"""


def _verdicts(*argvs: list[str]) -> list[list[str]]:
    result = python("-c", _PROBE, json.dumps(list(argvs)))
    assert "Traceback" not in result.stderr, result.stderr
    return [line.split()[1:] for line in result.stderr.splitlines() if line.startswith("RAN ")]


def _plain_tree(root: Path) -> Path:
    for i in range(3):
        (root / "src" / f"m{i}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / f"m{i}.py").write_text(f"import torch\n\n\ndef f{i}(x):  # noqa\n    return x.npu()\n")
    return root / "src"


def test_a_plain_tree_imports_neither_torch_nor_libcst(tmp_path: Path) -> None:
    src = _plain_tree(tmp_path)
    runs = [
        ["check", str(src)],
        ["transform", str(src), "--check"],
        ["transform", str(src), "-o", str(tmp_path / "o")],
        ["transform", str(src), "--diff"],
    ]
    assert _verdicts(*runs) == [["0", "False", "False"]] * 4
    assert (tmp_path / "o" / "m1.py").read_text() == (src / "m1.py").read_text()


def test_a_decorated_file_needs_libcst_and_still_never_torch(tmp_path: Path) -> None:
    runs = [
        ["check", str(SEED)],
        ["transform", str(SEED), "-o", str(tmp_path), "--target", "ge"],
        ["transform", str(SEED), "--jobs", "2", "--target", "npugraph_ex"],
    ]
    assert _verdicts(*runs) == [["0", "False", "True"]] * 3


def test_the_in_process_api_never_imports_torch() -> None:
    result = python("-c", _API, str(SEED))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["API", "False", "True"]
