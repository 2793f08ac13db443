"""Shared fixtures: the torchair/torch.npu index (wheel downloaded once) and torch.cuda's."""

from __future__ import annotations

import os

import pytest

from npu_contract import ApiTable, WheelFetchError, build_torch_table, load_npu_table


@pytest.fixture(scope="session")
def npu_table() -> ApiTable:
    """Skipped only when the download fails AND NPUDSL_OFFLINE=1; otherwise a failure fails."""
    try:
        return load_npu_table()
    except WheelFetchError as err:
        if os.environ.get("NPUDSL_OFFLINE") == "1":
            pytest.skip(f"NPUDSL_OFFLINE=1 and no torch-npu wheel: {err}")
        raise


@pytest.fixture(scope="session")
def cuda_table() -> ApiTable:
    pytest.importorskip("torch")
    return build_torch_table("torch.cuda")
