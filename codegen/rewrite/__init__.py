"""Rewrite: apply a module's plan to its libcst tree.

Entry: `splice.rewrite_source` (the source, its `ast`, the `ModulePlan` and the target's `Spelling` -> the new
text). IR: libcst trees of the top-level statements the plan changes.
"""

__all__ = ["splice"]
