"""What the functions of ``torch.nn.functional`` write when they run: the writes their kernels make through slots
the schemas leave plain.

``F.batch_norm(h, self.rm, self.rv, training=True)`` updates ``self.rm`` and ``self.rv`` in place, yet nothing in its
Python body says so: it calls ``torch.batch_norm``, whose ATen schema marks no argument ``Tensor(a!)``, and the kernel
it reaches on the CPU (``native_batch_norm``) writes the running stats through plain slots too. So at table-build
time each public function whose parameters can be made from its annotations (tensors, ``bool``, ``int``, ``float``;
the others at their defaults) is run on small tensors (``functional_samples.py``), and a parameter is written where
its tensor reaches an op slot marked ``Tensor(a!)`` or its values change. Which given parameters the write needs is
found by taking each away (``False``, ``None``) from a run that wrote: where the write stops, it is a guard
(``training`` for ``batch_norm``, ``use_input_stats`` for ``instance_norm``); a run that fails guards nothing. A
function no tensors fit is left to its body's reading (``functional_body_writes.py``).
"""

from __future__ import annotations

import ast
from typing import Any

from codegen.lower.flow.functional_samples import Config, Outcome, Sample, sample_of

__all__ = ["Probed", "Runs", "probed"]

Probed = dict[str, tuple[dict[str, set[frozenset[str]]], dict[str, set[frozenset[str]]]]]  # writes, passes


def probed(functions: dict[str, ast.FunctionDef]) -> Probed:
    """For each public function a run could be made of: parameter -> the sets of guards of its writes (none: it
    writes nothing), and parameter -> the sets of parameters whose taking away hands it back unread."""
    import torch.nn.functional as F

    found: Probed = {}
    for name, fn in sorted(functions.items()):
        func = getattr(F, name, None)
        sample = sample_of(func, fn) if not name.startswith("_") and callable(func) else None
        if sample is not None:
            runs = Runs(sample)
            found[name] = runs.writes(), runs.passes()
    return found


class Runs:
    """The runs of one sample, each config run once."""

    def __init__(self, sample: Sample) -> None:
        self.sample = sample
        self.done: dict[tuple[tuple[str, Any], ...], Outcome | None] = {}

    def outcome(self, config: Config) -> Outcome | None:
        """What a run with ``config`` does (None: it failed)."""
        key = tuple(sorted(config.items(), key=lambda item: item[0]))
        if key not in self.done:
            self.done[key] = self.sample.run(config)
        return self.done[key]

    def written(self, config: Config) -> frozenset[str] | None:
        found = self.outcome(config)
        return found.written if found is not None else None

    def writes(self) -> dict[str, set[frozenset[str]]]:
        """Each written parameter with the guards of the runs that wrote it (the base, and each with one taken)."""
        found: dict[str, set[frozenset[str]]] = {}
        base = self.sample.base
        for config in [base, *(self.sample.without(base, g) for g in self.sample.takeable(base))]:
            for param in self.written(config) or ():
                found.setdefault(param, set()).add(self._guards(config, param))
        return found

    def _guards(self, config: Config, param: str) -> frozenset[str]:
        """The parameters given in ``config`` whose taking away stops its write of ``param``."""
        guards = set()
        for guard in self.sample.takeable(config):
            written = self.written(self.sample.without(config, guard)) if guard != param else None
            if written is not None and param not in written:
                guards.add(guard)
        return frozenset(guards)

    def passes(self) -> dict[str, set[frozenset[str]]]:
        """Each parameter a run hands back unread: with no guard where the base run does, else with each parameter
        (a number too: ``p=0``) whose taking away alone makes it so."""
        base = self.sample.base
        first = self.outcome(base)
        always = first.passed if first is not None else frozenset()
        found: dict[str, set[frozenset[str]]] = {param: {frozenset()} for param in always}
        for guard in self.sample.takeable(base, numbers=True):
            taken = self.outcome(self.sample.without(base, guard))
            for param in (taken.passed if taken is not None else frozenset()) - always:
                found.setdefault(param, set()).add(frozenset({guard}))
        return found
