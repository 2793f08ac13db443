"""Shared fixtures of the race-table tests: the tests' own modules on the path, a clean dynamo cache."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    import torch

    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
