"""The table builder reads op-plugin kernels (``tools/npu_kernels.py``): which arguments an op whose schema marks no
write writes, where a declared op calls the same aclnn function, and which it returns as they came.

Made like op-plugin on a small tree: ``npu_cache_v2`` declares ``Tensor(a!) k_cache`` and hands it (through a
``TensorWrapper``) to ``aclnnCache`` at the second position, ``kv`` at the first; ``npu_cache`` declares both plain,
calls ``aclnnCache`` the same way and returns ``k_cache``: it writes ``k_cache`` only. ``npu_touchy`` also writes
``kv`` itself, and ``npu_alone`` calls an aclnn function no declared op calls: both stay unknown.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_TOOL = Path(__file__).resolve().parents[2] / "tools" / "npu_table_build.py"

YAML = """\
custom:
  - func: npu_cache_v2(Tensor kv, Tensor(a!) k_cache, float eps=1e-5) -> Tensor
  - func: npu_cache(Tensor kv, Tensor k_cache, float eps=1e-5) -> (Tensor, Tensor)
  - func: npu_cache_functional(Tensor kv, Tensor k_cache, float eps=1e-5) -> (Tensor, Tensor)
  - func: npu_touchy(Tensor kv, Tensor k_cache, float eps=1e-5) -> (Tensor, Tensor)
  - func: npu_alone(Tensor kv, Tensor k_cache) -> Tensor
"""

KERNEL = """\
at::Tensor npu_cache_v2(const at::Tensor &kv, at::Tensor &k_cache, double eps)
{
    TensorWrapper k_cache_wrapper = {k_cache, dtype};
    at::Tensor rope = npu_preparation::apply_tensor_without_format(kv.sizes(), kv.options());
    EXEC_NPU_CMD(aclnnCache, kv, k_cache_wrapper, eps, rope);
    return rope;
}

std::tuple<at::Tensor, at::Tensor> npu_cache(const at::Tensor &kv, const at::Tensor &k_cache, double eps)
{
    TORCH_CHECK(kv.dim() == 4, "kv must be 4D, k_cache too");  // kv.add_(1) in a comment is no write
    at::Tensor rope = npu_preparation::apply_tensor_without_format(kv.sizes(), kv.options());
    EXEC_NPU_CMD(aclnnCache, kv, k_cache, eps, rope);
    return std::tie(k_cache, rope);
}

std::tuple<at::Tensor, at::Tensor> npu_cache_functional(const at::Tensor &kv, const at::Tensor &k_cache, double eps)
{
    at::Tensor before = k_cache.clone();
    at::Tensor rope = npu_preparation::apply_tensor_without_format(kv.sizes(), kv.options());
    EXEC_NPU_CMD(aclnnCache, kv, k_cache, eps, rope);
    return std::tie(before, rope);
}

std::tuple<at::Tensor, at::Tensor> npu_touchy(const at::Tensor &kv, const at::Tensor &k_cache, double eps)
{
    kv.add_(1);
    at::Tensor rope = npu_preparation::apply_tensor_without_format(kv.sizes(), kv.options());
    EXEC_NPU_CMD(aclnnCache, kv, k_cache, eps, rope);
    return std::tie(k_cache, rope);
}

at::Tensor npu_alone(const at::Tensor &kv, const at::Tensor &k_cache)
{
    EXEC_NPU_CMD(aclnnAlone, kv, k_cache);
    return k_cache;
}
"""


def _tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("npu_table_build", _TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["npu_table_build"] = module
    spec.loader.exec_module(module)
    return module


def test_a_declared_call_of_the_same_aclnn_function_says_what_is_written(tmp_path: Path) -> None:
    tool = _tool()
    (tmp_path / "op_plugin" / "ops").mkdir(parents=True)
    (tmp_path / "op_plugin" / "ops" / "Kernels.cpp").write_text(KERNEL)
    (tmp_path / "docs").mkdir()
    facts = tool.kernel_facts(tool.custom_schemas(YAML), tmp_path)
    assert facts.writes == {"npu_cache": ["k_cache"], "npu_cache_functional": ["k_cache"]}
    assert facts.undeclared == ["npu_alone", "npu_touchy"]
    assert facts.returned == {op: [(0, "k_cache")] for op in ("npu_alone", "npu_cache", "npu_touchy")}
    namespace: dict[str, object] = {}
    exec(compile(tool.render(tool.custom_schemas(YAML), facts.undeclared, "a test", facts), "t.py", "exec"), namespace)
    assert namespace["KERNEL_WRITES"] == {"npu_cache": ("k_cache",), "npu_cache_functional": ("k_cache",)}
    assert namespace["RETURNED"]["npu_cache"] == ((0, "k_cache"),)  # type: ignore[index]
