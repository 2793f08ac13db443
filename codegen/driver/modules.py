"""Module identity in a run: the dotted name Python imports a file by, and a key unique among the run's files.

A file's dotted name walks up through packages (folders with ``__init__.py``).
Two files of one run may share it (two top-level ``model.py`` in different
folders): the run's key for each is then the dotted name prefixed with as many
of its folders, outermost last, as make the keys distinct (``a/model`` and
``b/model``). Everything the run derives per module, index entries and event
tags included, uses the key; so a tag stays the dotted module name whenever that
is unique. Imports resolve to dotted names, relative ones from the importing
file's package.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable

import attrs

__all__ = ["ModuleId", "absolute_import", "module_id", "module_name_for", "unique_keys"]


def module_name_for(path: str) -> str:
    """The dotted module name of ``path``, walking up through packages (folders with ``__init__.py``)."""
    path = os.path.abspath(path)
    parts = [os.path.splitext(os.path.basename(path))[0]]
    folder = os.path.dirname(path)
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.append(os.path.basename(folder))
        folder = os.path.dirname(folder)
    if parts[0] == "__init__" and len(parts) > 1:
        parts = parts[1:]
    return ".".join(reversed(parts))


@attrs.frozen(kw_only=True)
class ModuleId:
    key: str  # unique in the run: the dotted name, or "<folders>/<dotted name>" when files share it
    dotted: str  # the name the module is imported by
    package: bool = False  # an ``__init__.py``: its relative imports start from itself

    @classmethod
    def of(cls, module: str | ModuleId) -> ModuleId:
        """A bare key (as tests and single files give it) stands for itself, a plain module."""
        return module if isinstance(module, ModuleId) else cls(key=module, dotted=module.rpartition("/")[2])


def module_id(path: str, key: str | None = None) -> ModuleId:
    dotted = module_name_for(path)
    return ModuleId(key=key or dotted, dotted=dotted, package=os.path.basename(path) == "__init__.py")


def unique_keys(paths: Iterable[str]) -> dict[str, str]:
    """path -> the run's key for it (see the module docstring); the same file twice gets one key."""
    by_name: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        by_name[module_name_for(path)].add(os.path.abspath(path))
    keys: dict[str, str] = {}
    for dotted, files in by_name.items():
        for real, key in _disambiguated(dotted, sorted(files)).items():
            keys[real] = key
    return keys


def _folders(real: str, dotted: str) -> list[str]:
    """The folders above the file's top package, innermost first."""
    folder = os.path.dirname(real)
    for _ in range(dotted.count(".") + (os.path.basename(real) == "__init__.py")):
        folder = os.path.dirname(folder)
    names = []
    while os.path.basename(folder):
        names.append(os.path.basename(folder))
        folder = os.path.dirname(folder)
    return names


def _disambiguated(dotted: str, files: list[str]) -> dict[str, str]:
    if len(files) == 1:
        return {files[0]: dotted}
    chains = {real: _folders(real, dotted) for real in files}
    for depth in range(1, max(len(c) for c in chains.values()) + 1):
        keys = {real: "/".join([*reversed(chain[:depth]), dotted]) for real, chain in chains.items()}
        if len(set(keys.values())) == len(keys):
            return keys
    return {real: f"{real.replace(':', '_')}/{dotted}" for real in files}


def absolute_import(spec: str, importer: ModuleId) -> str | None:
    """The dotted module that ``from <spec> import ...`` in ``importer`` names (None: above the top package)."""
    level = len(spec) - len(spec.lstrip("."))
    name = spec[level:]
    if not level:
        return name
    base = importer.dotted.split(".") if importer.package else importer.dotted.split(".")[:-1]
    if level - 1 >= len(base):  # above the top package, or a module in no package at all
        return None
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name]) if name else ".".join(base)
