"""The GE stand-in orders what the race checker's schema model says is written: a write through a view that no
list of names knows (``ravel``) is a data edge GE orders itself, and one the explicit mode must wait for."""

from __future__ import annotations

import pytest
import torch

from npudsl.errors import StreamRaceError
from npudsl.testing.targets import run_checked
from test_standins import GE_WAIT, _cache_inputs

# test_standins' cache model, its side stream writing the cache through ``ravel`` and the main stream reading it
SOURCE = GE_WAIT.replace(
    "            cache.add_(y)\n            z = cache * y\n        return z\n",
    "            cache.ravel().add_(y)\n        return cache * 2\n",
)
assert "ravel" in SOURCE


def test_ge_orders_a_write_through_a_view_before_the_main_stream_reads_it() -> None:
    x, cache = _cache_inputs()
    assert torch.equal(run_checked(SOURCE, "ge", lambda m: m.Cache(), (x, cache)), (x + 1) * 2)


def test_the_explicit_mode_reports_the_unordered_write_through_the_view() -> None:
    where = (
        r"tensor 'cache' written in place on stream 'side' at <generated_\d+\.py>:10 "
        r"is read on stream 'default' at "
    )
    with pytest.raises(StreamRaceError, match=where + r"<generated_\d+\.py>:11 "):
        run_checked(SOURCE, "ge", lambda m: m.Cache(), _cache_inputs(), data_edges="explicit")
