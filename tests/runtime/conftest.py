"""Shared fixtures of the runtime tests: a clean dynamo cache around every test."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
