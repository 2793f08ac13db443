"""The rows of the sync benchmark: each example and corpus entry, its reference model, its generated code.

An example's reference is the decorated model run untransformed on the CPU (the
eager runtime runs it in program order); a corpus entry's is its single-stream
twin, with the decorated model's weights. The generated code of a row is
transformed for a target and captured whole under that target's stand-ins (as
``tests/targets`` and ``tests/corpus/matrix.py`` do), and its graph counted by
:mod:`bench.sync_count`. ``examples/distributed_overlap.py`` runs with a local
stand-in for ``dist.all_reduce`` (an in-place write of the tensor, as the
collective is): one process, no process group, the same sync calls.
"""

from __future__ import annotations

import contextlib
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import torch

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT / "tests", ROOT / "examples"):  # corpus.* and the example modules
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from bench.sync_count import count_graph  # noqa: E402
from bench.sync_premise import wrap  # noqa: E402
from codegen.driver.api import transform_source  # noqa: E402
from npudsl.errors import NpudslError  # noqa: E402
from npudsl.testing import standins  # noqa: E402
from npudsl.testing.targets import trace_graph  # noqa: E402

__all__ = ["EXAMPLES", "NATIVE", "TARGETS", "Row", "rows"]

TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")
NATIVE = ("npugraph_ex", "cuda")  # streams made by a first eager call, as on the device
EXAMPLES = {
    "core_split": "CoreSplitBlock",
    "distributed_overlap": "OverlapStep",
    "moe_decoder": "MoEDecoder",
    "seed000": "Model",
}


def _local_all_reduce(tensor: torch.Tensor, *_: Any, **__: Any) -> None:
    tensor.mul_(1)


@contextlib.contextmanager
def _one_process() -> Iterator[None]:
    saved = torch.distributed.all_reduce
    torch.distributed.all_reduce = _local_all_reduce
    try:
        yield
    finally:
        torch.distributed.all_reduce = saved


def _reason(error: BaseException) -> str:
    """One short line: the first diagnostic (code and message, without its path), else the error's first line."""
    text = str(error).replace("\\'", "'")
    found = re.search(r"(NPD\d+ [^(\]]*)", text)
    line = found.group(1).strip() if found else f"{type(error).__name__}: {(text.splitlines() or [''])[0]}"
    return re.sub(r"\S*/(\w+\.py):\d+", r"\1", line)[:110]


_CALLER = (
    "from bench.sync_premise import Caller\n\nfrom . import build as _build\n\n\n"
    "def build(**kwargs):\n    return Caller(_build(**kwargs))\n"
)


@attrs.frozen
class Row:
    name: str
    kind: str  # "example" or "corpus"
    caller: bool = True  # the premise (bench.sync_premise): inputs from a caller, else graph inputs
    alone: bool = False  # a corpus entry's files each transformed in a run of its own (``generated_package``)

    def reference(self) -> tuple[torch.nn.Module, Callable[[], tuple[Any, ...]]]:
        """The reference model and a function making fresh inputs for it."""
        if self.kind == "example":
            module = __import__(self.name)
            torch.manual_seed(0)
            return getattr(module, EXAMPLES[self.name])(), module.example_inputs
        from corpus.registry import entry

        found = entry(self.name)
        twin = found.build_twin()
        try:
            twin.load_state_dict(found.build().state_dict())
        except NpudslError as error:  # a feature the entry needs is refused: the twin's own seeded weights
            if found.refusal(error) is None:
                raise
        return twin, lambda: found.inputs()[0]

    def running(self) -> contextlib.AbstractContextManager[None]:
        return _one_process() if self.name == "distributed_overlap" else contextlib.nullcontext()

    def generated(self, target: str) -> Counter[str] | str:
        """The sync calls of one forward of the generated code, or why there is none."""
        try:
            return count_graph(self.graph(target))
        except Exception as error:  # noqa: BLE001 (a row that fails says why, the table goes on)
            return _reason(error)

    def graph(self, target: str) -> torch.fx.GraphModule:
        """The graph of one forward of the generated code for ``target`` (its failure raises)."""
        torch._dynamo.reset()  # one code object (the caller's forward) for every row: no recompile limit
        with self.running(), torch.no_grad():
            return self._example(target) if self.kind == "example" else self._corpus(target)

    def _example(self, target: str) -> torch.fx.GraphModule:
        path = ROOT / "examples" / f"{self.name}.py"
        code = transform_source(path.read_text(encoding="utf-8"), path=str(path), target=target)
        module = __import__(self.name)
        torch.manual_seed(0)
        trace = trace_graph(
            code,
            target,
            lambda m: wrap(getattr(m, EXAMPLES[self.name])(), self.caller),
            module.example_inputs(),
            name=f"sync_{self.name}",
            eager_first=target in NATIVE,
        )
        return trace.dynamo[0]

    def _corpus(self, target: str) -> torch.fx.GraphModule:
        from corpus.matrix import generated_package, run_generated
        from corpus.registry import entry

        found, graphs = entry(self.name), []
        original = standins.checking_backend

        def seeing(*args: Any, seen: Any = None, **kwargs: Any) -> Any:
            return original(*args, seen=lambda gm: (graphs.append(gm), seen and seen(gm)), **kwargs)

        with tempfile.TemporaryDirectory() as folder:
            package, _ = generated_package(found, target, Path(folder), alone=self.alone)
            standins.checking_backend = seeing
            try:
                run_generated(
                    self._called(package, Path(folder)),
                    Path(folder),
                    target,
                    lambda: found.inputs()[0],
                    eager_first=target in NATIVE,
                )
            finally:
                standins.checking_backend = original
                for loaded in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
                    del sys.modules[loaded]
        return graphs[0]

    def _called(self, package: str, root: Path) -> str:
        """The module whose ``build()`` the run calls: the package's own, or one wrapping it in a caller."""
        if not self.caller:
            return package
        (root / package / "_bench_caller.py").write_text(_CALLER, encoding="utf-8")
        return f"{package}._bench_caller"


def rows(caller: bool = True) -> list[Row]:
    """Every example, then every corpus entry, in the registry's order, under one premise."""
    from corpus.registry import NAMES

    return [Row(name, "example", caller) for name in EXAMPLES] + [Row(name, "corpus", caller) for name in NAMES]
