"""Name resolution: which names in a module are npudsl's decorators, through imports, aliases and rebindings
(NPD110).

Entry: `resolve.resolve`. IR: `resolve.NpudslNames`.
"""

__all__ = ["resolve"]
