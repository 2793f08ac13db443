"""A flow test's model package written to a temporary folder and transformed as the CLI transforms it.

Most flow tests define one small package (``model.py`` with a method per case, sometimes helper modules) and
modules the run must not read (a stand-in ``torch_npu``, an ``extlib``). This writes both and hands the package
to :func:`corpus.matrix.generated_package`, so every test transforms, writes and imports its package one way:
the package under a fresh name per call (each test imports new modules), the outside modules beside it.
"""

from __future__ import annotations

from pathlib import Path

from corpus.matrix import generated_package
from corpus.registry import Entry

__all__ = ["CALLER_INIT", "written_package"]

CALLER_INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""


def written_package(
    tmp_path: Path,
    stem: str,
    target: str,
    files: dict[str, str],
    *,
    beside: dict[str, str] | None = None,
    alone: bool = False,
) -> tuple[str, dict[str, str]]:
    """Write ``files`` (``__init__.py`` defaults to :data:`CALLER_INIT`) as package ``stem`` and ``beside`` as
    top-level modules outside the run; transform the package for ``target`` (each file alone if ``alone``) into
    ``tmp_path / "out"``. Returns the generated package's name and each transformed file's code."""
    folder = tmp_path / "src" / stem
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in {"__init__.py": CALLER_INIT, **files}.items():
        (folder / name).write_text(source, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    for name, source in (beside or {}).items():
        (out / name).write_text(source, encoding="utf-8")
    entry = Entry(name=stem, package=stem, path=folder, idioms=(), upstream=(), needs=())
    return generated_package(entry, target, out, alone=alone)
