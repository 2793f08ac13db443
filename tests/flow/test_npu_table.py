"""``npu_table.py`` and its builder (``tools/npu_table_build.py``): every write a schema declares is read, and an
op whose kernel writes what its schema leaves plain is found from the sources.

The op-plugin checkout is not part of this repository, so the builder runs here on a small tree made like it:
a ``custom`` section, a kernel returning its ``k_cache`` parameter (as ``npu_kv_rmsnorm_rope_cache`` does), a
page saying an op updates in place.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from codegen.lower.flow.npu_schema import written_params
from codegen.lower.flow.npu_table import SCHEMAS, UNDECLARED
from tools.npu_settled import SETTLED

_TOOL = Path(__file__).resolve().parents[2] / "tools" / "npu_table_build.py"

YAML = """\
all_version: [v2.1]
official:
  - func: relu_(Tensor(a!) self) -> Tensor(a!)
    op_api: all_version

custom:
  - func: npu_pure(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)
    op_api: all_version

  - func: npu_fill_(Tensor(a!) self, int[2] range=[1, 2], str mode="a,b") -> Tensor(a!)
    op_api: all_version

  - func: npu_cache(Tensor kv, Tensor k_cache) -> (Tensor, Tensor)
    op_api: all_version

  - func: npu_rotary(Tensor query, Tensor key) -> (Tensor, Tensor)
    op_api: all_version

symint:
  - func: npu_pure(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)
    op_api: all_version
"""

KERNEL = """\
std::tuple<at::Tensor, at::Tensor> npu_cache(const at::Tensor &kv, const at::Tensor &k_cache)
{
    at::Tensor rope = npu_preparation::apply_tensor_without_format(kv);
    EXEC_NPU_CMD(aclnnCache, kv, k_cache, rope);
    return std::tie(k_cache, rope);
}

std::tuple<at::Tensor, at::Tensor> npu_pure(const at::Tensor &self, const at::Tensor &gamma, double epsilon)
{
    at::Tensor y = npu_preparation::apply_tensor_without_format(self);
    return std::make_tuple(y, npu_other(self.options()));
}
"""


def _tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("npu_table_build", _TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["npu_table_build"] = module
    spec.loader.exec_module(module)
    return module


def test_the_builder_reads_the_custom_section_and_the_sources(tmp_path: Path) -> None:
    tool = _tool()
    (tmp_path / "op_plugin" / "ops").mkdir(parents=True)
    (tmp_path / "op_plugin" / "ops" / "Kernels.cpp").write_text(KERNEL)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "torch_npu-npu_rotary.md").write_text("query and key are rotated in-place.\n")
    schemas = tool.custom_schemas(YAML)
    assert [tool.op_name(s) for s in schemas] == ["npu_pure", "npu_fill_", "npu_cache", "npu_rotary"]
    assert tool.undeclared(schemas, tmp_path) == ["npu_cache", "npu_rotary"]
    text = tool.render(schemas, ["npu_cache"], "a test")
    namespace: dict[str, object] = {}
    exec(compile(text, "npu_table.py", "exec"), namespace)
    assert namespace["SCHEMAS"] == tuple(schemas)
    assert namespace["UNDECLARED"] == frozenset({"npu_cache"})


def test_every_declared_write_is_read() -> None:
    for schema in SCHEMAS:
        head = schema.split("(", 1)[0]
        op, _, overload = head.partition(".")
        declared = schema.rpartition(") ->")[0].count("!")
        found = written_params(op, overload or "default")
        assert op in UNDECLARED or (found is not None and sum(len(p) for p in found) >= declared), schema


def test_the_undeclared_writers_include_the_known_ones() -> None:
    assert {"npu_apply_rotary_pos_emb", "npu_mla_prolog_v2"} <= UNDECLARED | set(SETTLED)  # settled by CANN's sources
    assert not any("!" in s.rpartition(") ->")[0] for s in SCHEMAS if s.split("(")[0].split(".")[0] in UNDECLARED)
