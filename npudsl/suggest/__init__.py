"""``npudsl suggest``: find the calls of an unannotated model that can overlap, and propose the decorators.

Stages, one module each: :mod:`~npudsl.suggest.units` (ops grouped into calls of
the model's methods and submodules), :mod:`~npudsl.suggest.dag` (what each call
reads, writes and may overlap with), :mod:`~npudsl.suggest.hoist` (where a call's
statement may move up in its block, the data allowing), :mod:`~npudsl.suggest.plan`
(a greedy critical-path placement on side streams, priced against the syncs it
adds), :mod:`~npudsl.suggest.apply` (the decorators and moves written into the
source with libcst) and :mod:`~npudsl.suggest.report`. :func:`suggest` runs them all.
Importing this package does not import torch; :func:`suggest` does.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Suggestion", "suggest"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from npudsl.suggest import run as module

        return getattr(module, name)
    raise AttributeError(name)
