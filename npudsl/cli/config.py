"""``[tool.npudsl]`` in the nearest ``pyproject.toml``: defaults for the command line (flags win).

The search starts at the folder the paths given share (the current folder for
standard input) and goes up; the first ``pyproject.toml`` with a
``[tool.npudsl]`` table is the configuration, as ruff finds its own.

```toml
[tool.npudsl]
target = "ge"                 # transform, check
device = "atlas-a2"           # check (or cores = "24,48")
jobs = 4                      # transform, check
exclude = ["legacy", "*_pb2.py"]
select = ["NPD5"]             # report only these codes (prefixes)
ignore = ["NPD502"]           # never report these
```
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Sequence
from typing import Any

import attrs

from npudsl import codes
from npudsl.errors import NpudslError

__all__ = ["CODE_PATTERN", "Config", "ConfigError", "find_config", "load_config"]

CODE_PATTERN = re.compile(r"NPD\d{0,3}\Z")
_LISTS = ("exclude", "select", "ignore")


class ConfigError(NpudslError):
    """A ``[tool.npudsl]`` table that cannot be used (a usage error: exit 2)."""


@attrs.frozen(kw_only=True)
class Config:
    path: str | None = None  # the pyproject.toml it came from; None: no configuration
    target: str | None = None
    device: str | None = None
    cores: str | None = None
    jobs: int | None = None
    exclude: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @property
    def base(self) -> str:
        """The folder ``exclude`` patterns are relative to."""
        return os.path.dirname(self.path) if self.path else "."


def _start(paths: Sequence[str]) -> str:
    folders = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths if p != "-"]
    return os.path.commonpath(folders) if folders else os.getcwd()


def _table(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it as TOML: {exc}") from None
    table = data.get("tool", {}).get("npudsl")
    return table if isinstance(table, dict) else None


def find_config(paths: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
    """(path, table) of the nearest ``pyproject.toml`` with ``[tool.npudsl]`` above ``paths``."""
    folder = _start(paths)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        table = _table(candidate) if os.path.isfile(candidate) else None
        if table is not None:
            return candidate, table
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _check_list(path: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'{path}: [tool.npudsl] {key} must be a list of strings, e.g. {key} = ["..."]')
    if key != "exclude":
        bad = [v for v in value if not CODE_PATTERN.match(v)]
        if bad:
            raise ConfigError(
                f"{path}: [tool.npudsl] {key}: {bad[0]!r} is not a code or prefix like NPD5 or {codes.UNUSED_RECORD}"
            )
    return tuple(value)


def _cores(path: str, value: Any) -> str:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return f"{value[0]},{value[1]}"
    if isinstance(value, str):
        return value
    raise ConfigError(f'{path}: [tool.npudsl] cores must be "AIC,AIV" or [AIC, AIV], e.g. cores = [24, 48]')


def _scalar(path: str, key: str, value: Any) -> Any:
    if key == "cores":
        return _cores(path, value)
    if key == "jobs":
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{path}: [tool.npudsl] jobs must be a whole number of at least 1")
        return value
    if not isinstance(value, str):
        raise ConfigError(f'{path}: [tool.npudsl] {key} must be a string, e.g. {key} = "..."')
    return value


def parse_table(path: str, table: dict[str, Any]) -> Config:
    known = {f.name for f in attrs.fields(Config)} - {"path"}
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise ConfigError(f"{path}: [tool.npudsl] has no key {key!r}; known keys: {', '.join(sorted(known))}")
        values[key] = _check_list(path, key, value) if key in _LISTS else _scalar(path, key, value)
    if "device" in values and "cores" in values:
        raise ConfigError(f"{path}: [tool.npudsl] sets both device and cores; keep one")
    return Config(path=path, **values)


def load_config(paths: Sequence[str]) -> Config:
    """The configuration for a run over ``paths`` (an empty one when there is none)."""
    found = find_config(paths)
    return parse_table(*found) if found else Config()
