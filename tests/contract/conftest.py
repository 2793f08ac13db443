"""Shared fixtures: the torch-npu wheel (downloaded once), its torchair/torch.npu index, and torch.cuda's.

Offline, set NPUDSL_OFFLINE=1: the tests that need the wheel then skip with the reason
(unset, a failed download fails, so that a run never passes without checking).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from npu_contract import ApiTable, WheelFetchError, build_torch_table, load_npu_table, open_wheel
from npu_contract.fetch import WheelSource


def _offline_skip(err: WheelFetchError) -> None:
    """Skip when the download failed AND NPUDSL_OFFLINE=1; otherwise return (the caller re-raises)."""
    if os.environ.get("NPUDSL_OFFLINE") == "1":
        pytest.skip(f"NPUDSL_OFFLINE=1 and no torch-npu wheel: {err}")


@pytest.fixture(scope="session")
def npu_table() -> ApiTable:
    try:
        return load_npu_table()
    except WheelFetchError as err:
        _offline_skip(err)
        raise


@pytest.fixture(scope="session")
def wheel() -> Iterator[WheelSource]:
    """The wheel itself, for facts the API table does not hold (schemas, backend names, config classes)."""
    try:
        source = open_wheel()
    except WheelFetchError as err:
        _offline_skip(err)
        raise
    yield source
    source.close()


@pytest.fixture(scope="session")
def cuda_table() -> ApiTable:
    pytest.importorskip("torch")
    return build_torch_table("torch.cuda")
