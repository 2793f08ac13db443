"""Records shared by the index and the verifier: parameters, API entries, problems."""

from __future__ import annotations

import enum
from collections.abc import Mapping

import attrs

__all__ = [
    "ApiEntry",
    "ApiKind",
    "ApiTable",
    "ConfigLeaf",
    "ConfigTree",
    "Param",
    "ParamKind",
    "Problem",
]


class ParamKind(enum.Enum):
    """The five parameter kinds of a Python signature (as in `inspect`)."""

    POSITIONAL_ONLY = "positional_only"
    POSITIONAL_OR_KEYWORD = "positional_or_keyword"
    VAR_POSITIONAL = "var_positional"
    KEYWORD_ONLY = "keyword_only"
    VAR_KEYWORD = "var_keyword"


class ApiKind(enum.Enum):
    """What a public name denotes."""

    FUNCTION = "function"
    CLASS = "class"
    METHOD = "method"
    MODULE = "module"
    VALUE = "value"


@attrs.frozen(kw_only=True)
class Param:
    """One parameter: its name, kind and whether it has a default."""

    name: str
    kind: ParamKind
    has_default: bool = False


@attrs.frozen(kw_only=True)
class ApiEntry:
    """A public name; `params` is None when the signature cannot be known.

    For a class, `params` is its constructor's (without `self`/`cls`), and
    `closed` says whether every member is known (no base outside the sources).
    A MODULE entry with `closed=False` is a namespace that was not indexed.
    """

    name: str
    kind: ApiKind
    params: tuple[Param, ...] | None = None
    closed: bool = True
    origin: str = ""


@attrs.frozen(kw_only=True)
class ConfigLeaf:
    """An assignable CompilerConfig option: its default and allowed values."""

    path: str
    default: object = None
    choices: tuple[object, ...] | None = None


@attrs.frozen(kw_only=True)
class ConfigTree:
    """CompilerConfig's dotted attribute paths: options (leaves) and sub-configs."""

    leaves: Mapping[str, ConfigLeaf]
    nodes: frozenset[str]

    def is_option(self, path: str) -> bool:
        return path in self.leaves


@attrs.frozen(kw_only=True)
class ApiTable:
    """Qualified public names of some namespaces, and how to spell them.

    `roots` are the dotted prefixes this table answers for; `aliases` maps other
    spellings of a namespace onto the indexed one (`torch_npu.npu` -> `torch.npu`).
    `config_class` names the class whose instances `config` describes.
    """

    entries: Mapping[str, ApiEntry]
    roots: frozenset[str]
    aliases: Mapping[str, str] = attrs.field(factory=dict)
    config: ConfigTree | None = None
    config_class: str | None = None

    def canonical(self, name: str) -> str:
        for alias, target in self.aliases.items():
            if name == alias or name.startswith(alias + "."):
                return target + name[len(alias) :]
        return name

    def covers(self, name: str) -> bool:
        return any(name == r or name.startswith(r + ".") for r in self.roots)


@attrs.frozen(kw_only=True)
class Problem:
    """A reference the real API does not accept; line and col are 1-based."""

    line: int
    col: int
    name: str
    message: str

    def __str__(self) -> str:
        return f"{self.line}:{self.col}: {self.name}: {self.message}"
