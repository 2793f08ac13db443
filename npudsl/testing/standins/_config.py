"""Stand-ins for ``torchair.CompilerConfig`` and npugraph_ex's ``CompilerConfig``: the options npudsl sets.

They keep the real classes' behaviour where a caller can see it
(``torchair/configs/_option_base.py``): an option is an object whose ``.value``
reads ``True``/``False`` as ``"1"``/``"0"``; assigning a value outside its choices,
or an option the class does not have, raises ``ValueError``. Only the options that
npudsl uses exist here (a subset of the real ones): ``mode``,
``aclgraph_config.use_custom_pool``, ``debug.aclgraph.{disable_mempool_reuse_in_same_fx,
clone_input, enable_output_clone}``; for npugraph_ex ``use_graph_pool``,
``reuse_graph_pool_in_same_fx``, ``clone_input``, ``clone_output``, ``deadlock_check``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CompilerConfig", "NpuGraphExConfig", "Option", "apply_options"]

_BOOL = [True, False]


class Option:
    """One setting: ``default``, the allowed ``choices`` (``None``: anything)."""

    def __init__(self, default: Any, choices: list[Any] | None = None) -> None:
        self.default = default
        self.choices = choices
        self._value = default

    def __bool__(self) -> bool:
        return bool(self._value)

    @property
    def value(self) -> str | None:
        if self._value is None:
            return None
        if str(self._value) in ("True", "False"):
            return "1" if str(self._value) == "True" else "0"
        return str(self._value)

    @value.setter
    def value(self, new: Any) -> None:
        if self.choices is not None and new not in self.choices:
            raise ValueError(f"Value {new!r} (type: {type(new)}) not in optional list {self.choices!r}")
        self._value = new


class _Group:
    """Assigning to an :class:`Option` sets its value; other names than the declared ones raise."""

    _fixed: list[str]  # the declared names, once ``_freeze`` ran

    def _freeze(self) -> None:
        object.__setattr__(self, "_fixed", [k for k, v in vars(self).items() if isinstance(v, (Option, _Group))])

    def __setattr__(self, key: str, value: Any) -> None:
        fixed = getattr(self, "_fixed", None)
        if fixed is None:
            object.__setattr__(self, key, value)
        elif key not in fixed:
            raise ValueError(f"{type(self).__name__} has no option {key}, all options {fixed}")
        elif isinstance(getattr(self, key), Option):
            getattr(self, key).value = value
        else:
            object.__setattr__(self, key, value)


class _AclGraphConfig:
    """Not an option group in torchair either: ``use_custom_pool`` is a plain attribute."""

    def __init__(self) -> None:
        self.use_custom_pool = None


class _AclGraphDebug(_Group):
    def __init__(self) -> None:
        self.disable_mempool_reuse_in_same_fx = Option(False, _BOOL)
        self.enable_output_clone = Option(False, _BOOL)
        self.clone_input = Option(True, _BOOL)
        self._freeze()


class _Debug(_Group):
    def __init__(self) -> None:
        self.aclgraph = _AclGraphDebug()
        self._freeze()


class CompilerConfig(_Group):
    """``torchair.CompilerConfig`` (``torchair/configs/compiler_config.py``), the options npudsl sets."""

    def __init__(self) -> None:
        self.debug = _Debug()
        self.aclgraph_config = _AclGraphConfig()
        self.mode = Option("max-autotune", ["max-autotune", "reduce-overhead", "npugraph_ex"])
        self._freeze()


class NpuGraphExConfig(_Group):
    """npugraph_ex's ``CompilerConfig`` (``npugraph_ex/configs/compiler_config.py``), the options npudsl sets."""

    def __init__(self) -> None:
        self.use_graph_pool = None
        self.reuse_graph_pool_in_same_fx = Option(True, _BOOL)
        self.clone_input = Option(True, _BOOL)
        self.clone_output = Option(False, _BOOL)
        self.deadlock_check = Option(False, _BOOL)
        self.mode = Option("npugraph_ex", ["npugraph_ex"])
        self._freeze()
        self._fixed.append("use_graph_pool")


def apply_options(config: NpuGraphExConfig, options: dict[str, Any] | None) -> NpuGraphExConfig:
    """``torch.compile(backend="npugraph_ex", options=...)``: each name must be an option of the config."""
    for name, value in (options or {}).items():
        if not hasattr(config, name):
            raise ValueError(
                f"Invalid option '{name}'. The '{type(config).__name__}' object does not have attribute '{name}'."
            )
        setattr(config, name, value)
    return config
