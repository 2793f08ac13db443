"""The front end: which decorators are npudsl's (`names/`), and what they say, as frozen IR with positions
(NPD0xx/1xx).

Entry: `collect.collect`. IR: `ir.ModuleIR` of `StreamFunction`s.
"""

__all__ = ["collect", "ir"]
