"""Transform a corpus entry for a target and run the generated package under the stand-ins, race-checked.

The entry's files are transformed as the CLI does (``codegen.driver.run``), either together (one run) or each
file alone (a run of one file: the other files keep their decorators and run through the eager
runtime). The result is written as a new package under ``root`` and imported from there, so relative
imports work; the generated model is compiled whole with the race-checking backend of its target.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import itertools
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from codegen.driver.run import read_sources, run
from corpus.registry import Entry
from npudsl.testing import standins
from npudsl.testing.targets import _RECORD_STREAM, _RecordStream

__all__ = ["copied_package", "generated_files", "generated_package", "run_generated"]

_COUNT = itertools.count(1)


def generated_package(entry: Entry, target: str, root: Path, *, alone: bool = False) -> tuple[str, dict[str, str]]:
    """Write ``entry`` transformed for ``target`` under ``root``; return its package name and each file's code."""
    name = f"gen_{entry.name}_{target}_{next(_COUNT)}"
    folder = root / name
    shutil.copytree(entry.path, folder, ignore=shutil.ignore_patterns("__pycache__"))
    files = read_sources((str(folder / p.name), str(folder)) for p in entry.model_files)
    groups = [[f] for f in files] if alone else [files]
    codes: dict[str, str] = {}
    for group in groups:
        for result in run(group, target=target, jobs=1):
            assert not result.has_errors, [d.format() for d in result.diagnostics] or result.internal_error
            codes[Path(result.file.path).name] = result.code if result.code is not None else result.file.source
    for file_name, code in codes.items():
        (folder / file_name).write_text(_traceable(code, target), encoding="utf-8")
    return name, codes


def generated_files(
    tmp_path: Path, package: str, files: Mapping[str, str], target: str, *, alone: bool = False
) -> tuple[str, dict[str, str]]:
    """A test's own package: ``files`` (name -> source) written as the package ``package`` under ``tmp_path``,
    then generated for ``target`` into ``tmp_path / "out"``, where :func:`run_generated` imports it from."""
    folder = tmp_path / package
    folder.mkdir(exist_ok=True)
    for name, source in files.items():
        (folder / name).write_text(source, encoding="utf-8")
    entry = Entry(name=package.removeprefix("pkg_"), package=package, path=folder, idioms=(), upstream=(), needs=())
    (tmp_path / "out").mkdir(exist_ok=True)
    return generated_package(entry, target, tmp_path / "out", alone=alone)


@contextlib.contextmanager
def copied_package(entry: Entry, root: Path) -> Iterator[ModuleType]:
    """The entry's package copied under ``root`` and imported as a top-level package of its own, so that a
    run over its package (``npudsl.compile``) reads its files and no other entry's."""
    shutil.copytree(entry.path, root / entry.name, ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(entry.name)
    finally:
        sys.path.remove(str(root))
        for loaded in [m for m in sys.modules if m == entry.name or m.startswith(f"{entry.name}.")]:
            del sys.modules[loaded]


def _traceable(code: str, target: str) -> str:
    """Native targets call ``tensor.record_stream``, which dynamo traces only with real streams (see
    :mod:`npudsl.testing.targets`): route it to the stand-in, keeping line numbers."""
    if target not in ("cuda", "npugraph_ex"):
        return code
    return ast.unparse(ast.fix_missing_locations(_RecordStream().visit(ast.parse(code))))


def _assert_one_graph_without_stashes(graphs: list[torch.fx.GraphModule], outputs: Any, what: str) -> None:
    """Two calls traced one graph, and the graph returns what the model returns and nothing it stashed."""
    assert len(graphs) == 1, f"{what}: {len(graphs)} graphs for two calls (a recompile)"
    returned = {id(t) for t in torch.utils._pytree.tree_leaves(outputs) if isinstance(t, torch.Tensor)}
    (node,) = [n for n in graphs[0].graph.nodes if n.op == "output"]
    produced = [a for a in torch.utils._pytree.tree_leaves(node.args) if isinstance(a, torch.fx.Node)]
    assert len(produced) <= len(returned), (
        f"{what}: the graph returns {len(produced)} tensors, the model {len(returned)}"
    )


def run_generated(
    package: str,
    root: Path,
    target: str,
    inputs: Callable[[], tuple[Any, ...]],
    *,
    eager_first: bool = False,
    **build: Any,
) -> Any:
    """Import the generated ``package`` under ``target``'s stand-ins, compile its model whole with the race
    checker, run it once on fresh ``inputs()`` and return the outputs. ``eager_first``: one eager call before
    (on inputs of its own), as a first eager step makes lazily created streams and events."""
    sys.path.insert(0, str(root))
    setattr(builtins, _RECORD_STREAM, standins.record_stream)
    try:
        with standins.installed(target), torch.no_grad():
            module = importlib.import_module(package)
            model = module.build(**build)
            if eager_first:
                model(*inputs())
            graphs: list[torch.fx.GraphModule] = []
            compiled = torch.compile(
                model, backend=standins.checking_backend(target, seen=graphs.append), fullgraph=True
            )
            outputs = compiled(*inputs())
            outputs = compiled(*inputs())
            _assert_one_graph_without_stashes(graphs, outputs, f"{package} on {target}")
            return outputs
    finally:
        sys.path.remove(str(root))
        delattr(builtins, _RECORD_STREAM)
        for loaded in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
            del sys.modules[loaded]
