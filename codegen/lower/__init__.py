"""Lowering: a module's IR and the run index become a target-free plan; `flow/` plans the automatic
synchronization of each caller.

Entry: `lower.lower`. IR: `plan.ModulePlan` (`FunctionPlan`, `CallerPlan`).
"""

__all__ = ["lower", "plan"]
