"""The run index: what every file of a run says about the others (stream functions, submodules, call sites across
files).

Entry: `index.build_index`. IR: `index.RunIndex` (`CalleeInfo`, `CallInfo`).
"""

__all__ = ["index"]
