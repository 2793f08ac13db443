"""The contract between generated code and the real torchair / torch.npu / torch.cuda.

torchair cannot be imported here, so its sources are read as text from the
torch-npu wheel (downloaded once, cached) and indexed with libcst; generated
sources are then checked against that index. See docs/contract.md.
"""

from npu_contract.fetch import TORCH_NPU_VERSION, WheelFetchError, cache_dir, fetch_wheel, open_wheel
from npu_contract.index import build_npu_table, load_npu_table
from npu_contract.model import ApiEntry, ApiKind, ApiTable, ConfigLeaf, ConfigTree, Param, ParamKind, Problem
from npu_contract.resolve import SourceTree
from npu_contract.torch_table import build_torch_table
from npu_contract.verify import api_references, lookup, verify_config_paths, verify_source

__all__ = [
    "TORCH_NPU_VERSION",
    "ApiEntry",
    "ApiKind",
    "ApiTable",
    "ConfigLeaf",
    "ConfigTree",
    "Param",
    "ParamKind",
    "Problem",
    "SourceTree",
    "WheelFetchError",
    "api_references",
    "build_npu_table",
    "build_torch_table",
    "cache_dir",
    "fetch_wheel",
    "load_npu_table",
    "lookup",
    "open_wheel",
    "verify_config_paths",
    "verify_source",
]
