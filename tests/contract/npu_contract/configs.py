"""CompilerConfig's option tree, read from the config classes' `__init__`."""

from __future__ import annotations

from npu_contract.model import ConfigLeaf, ConfigTree
from npu_contract.pysource import NO_LITERAL, ClassInfo, FieldInfo
from npu_contract.resolve import Definition, SourceTree

__all__ = ["config_tree"]

_OPTION_BASE = "OptionValue"


def _is_option_class(tree: SourceTree, cls: Definition) -> bool:
    chain, _ = tree.class_chain(cls)
    return any(c.name == _OPTION_BASE for c in chain)


def _fields(tree: SourceTree, cls: Definition) -> list[tuple[Definition, str, FieldInfo | None]]:
    """(defining class, name, field) for every option, bases first."""
    chain, _ = tree.class_chain(cls)
    out: dict[str, tuple[Definition, str, FieldInfo | None]] = {}
    for found in chain:
        assert isinstance(found.info, ClassInfo)
        out.update((k, (found, k, v)) for k, v in found.info.fields.items())
        out.update((k, (found, k, None)) for k in found.info.extra_fields if k not in out)
    return list(out.values())


def _plain(value: object) -> object:
    return None if value is NO_LITERAL else value


def _leaf(path: str, option: Definition | None, field: FieldInfo | None) -> ConfigLeaf:
    if field is None:
        return ConfigLeaf(path=path)
    if option is None:
        return ConfigLeaf(path=path, default=_plain(field.literal))
    args = [_plain(a) for a in field.args]
    if option.name == "DeprecatedValue":
        args = [None, *args]
    default = args[0] if args else None
    choices = args[1] if option.name == _OPTION_BASE and len(args) > 1 else None
    return ConfigLeaf(path=path, default=default, choices=tuple(choices) if isinstance(choices, list) else None)


def _walk(tree: SourceTree, cls: Definition, prefix: str, leaves: dict, nodes: set) -> None:
    for owner, name, field in _fields(tree, cls):
        if name == "_fixed_attrs":
            continue
        path = f"{prefix}{name}"
        target = tree.resolve_dotted(owner.module, field.callee) if field and field.callee else None
        if target is not None and target.kind == "class" and not _is_option_class(tree, target):
            nodes.add(path)
            _walk(tree, target, f"{path}.", leaves, nodes)
        else:
            leaves[path] = _leaf(path, target, field)


def config_tree(tree: SourceTree, config_class: Definition | None) -> ConfigTree:
    """Every dotted option path under CompilerConfig, with defaults and choices."""
    if config_class is None or config_class.kind != "class":
        raise LookupError("torchair.CompilerConfig was not found in the wheel's sources")
    leaves: dict[str, ConfigLeaf] = {}
    nodes: set[str] = set()
    _walk(tree, config_class, "", leaves, nodes)
    return ConfigTree(leaves=leaves, nodes=frozenset(nodes))
