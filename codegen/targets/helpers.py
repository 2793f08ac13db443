"""Module-level helpers the generated code of the device targets defines for itself (it imports no npudsl).

Values a parameter or a result may hold are walked at trace time (free under dynamo): only tensors
reach ``record_stream``; tuples, named tuples, lists and dicts are walked or rebuilt; anything else
passes untouched, but for ``record_stream`` a plain object's attributes (one level: not a module's, not a
class's): a side body may read tensors the caller's stream made through an object it is given
(``dispatcher.permute2()`` reading ``self.permuted_tokens``). ``{name}`` is the helper's own (hygienic)
name, ``TORCH`` the module's ``torch``.
"""

from __future__ import annotations

__all__ = ["CLONE", "RECORD"]

RECORD = '''def {name}(value, stream, objects=True) -> None:
    """RECORD_DOC"""
    if isinstance(value, TORCH.Tensor):
        RECORD_CALL
    elif isinstance(value, (tuple, list)):
        for item in value:
            {name}(item, stream, objects)
    elif isinstance(value, dict):
        for item in value.values():
            {name}(item, stream, objects)
    elif objects and not isinstance(value, (type, TORCH.nn.Module)) and hasattr(value, "__dict__"):
        for item in vars(value).values():
            {name}(item, stream, False)
'''

CLONE = '''def {name}(value):
    """``value`` with each tensor in it cloned, rebuilding tuples, named tuples, lists and dicts."""
    if isinstance(value, TORCH.Tensor):
        return value.clone()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[{name}(item) for item in value])
    if isinstance(value, (tuple, list)):
        return type(value)([{name}(item) for item in value])
    if isinstance(value, dict):
        return {key: {name}(item) for key, item in value.items()}
    return value
'''
