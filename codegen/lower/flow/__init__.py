"""The flow planner: where each caller forks to and joins a stream function's stream, following the data.

Entry: `planner`. IR: the steps of `lower.plan`.
"""

__all__ = ["planner"]
