"""The check stage: the rules of `npudsl check`, one per module under `rules/`, run on a module's IR and the run
index.

Entry: `validate.validate`. IR: `diagnostics.Diagnostic`.
"""

__all__ = ["validate", "diagnostics"]
