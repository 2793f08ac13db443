"""Error types: user errors and internal errors are different types."""

from __future__ import annotations

__all__ = ["DecoratorError", "NpudslError", "StaleOutputError", "StreamRaceError"]


class NpudslError(Exception):
    """Base of the errors a user can cause and fix."""


class DecoratorError(NpudslError, ValueError):
    """A decorator was given arguments the contract does not allow."""


class StreamRaceError(NpudslError):
    """A captured graph uses a tensor across streams without synchronization."""


class StaleOutputError(NpudslError):
    """A graph output is used after a later replay of its graph overwrote its memory (seed 003, scenario 2)."""
