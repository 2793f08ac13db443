"""The run index: what every file of a run says about the others (stream functions, submodules, call sites across
files).

Entry: `index.build_index`. IR: `info.RunIndex` (`CalleeInfo`, `CallInfo`; `index` names them too).
"""

__all__ = ["index"]
