"""The ``Caller`` the planner's tests append to a model's source, so that one model class holds every case.

A test's model defines one method per case; ``Caller(method, *args)`` builds ``Model(*args)`` and calls that
method on ``x * 1``: a tensor the run made (not a graph input), so the keep-alive rules are exercised as they
are for a real caller's temporaries, and the caller frame holds nothing but the method's result.
"""

from __future__ import annotations

__all__ = ["caller_source"]


def caller_source(model: str = "Model") -> str:
    """The ``Caller`` class's source, to append after the class ``model`` (its module imports ``nn``)."""
    return f"""

class Caller(nn.Module):
    def __init__(self, method, *args):
        super().__init__()
        self.model, self.method = {model}(*args), method

    def forward(self, x):
        return getattr(self.model, self.method)(x * 1)
"""
