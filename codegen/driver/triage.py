"""Which files of a run need analysis at all, decided on the text alone (no parse, no libcst).

Most files of a real tree never name npudsl. Each such file should cost a read and a
substring test, so the test is decided here, on the source text, before anything is
parsed or imported. A file is analyzed when it names npudsl (a decorator, an import),
when the run's index saw a call from it into a stream function, or when it spells
``.<name>(`` for a stream method of the run (a call the checks may report on). Every
other file is left exactly as it is, with no diagnostic.

The facts read from the index are computed once per index (one regular expression for
every method name), not once per file.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import attrs

from codegen.driver.pyast import mentions_npudsl

if TYPE_CHECKING:
    from codegen.index.index import RunIndex

__all__ = ["Triage", "needs_analysis"]


@attrs.frozen
class Triage:
    """What a file must show to be analyzed in a run with this index."""

    calling: frozenset[str]  # modules (run keys) that call a stream function
    methods: re.Pattern[str] | None  # ``.<name>(`` for every stream method (None: the run has none)

    @classmethod
    def of(cls, index: RunIndex) -> Triage:
        calling = frozenset(call.module for calls in index.stream_calls.values() for call in calls)
        names = sorted(
            {
                key.rsplit(".", 1)[1]
                for key, callee in index.callees.items()
                if "." in key.split(":", 1)[1] and not callee.class_level
            }
        )
        methods = re.compile(r"\.(?:" + "|".join(map(re.escape, names)) + r")\(") if names else None
        return cls(calling=calling, methods=methods)

    def needs(self, source: str, module: str) -> bool:
        return (
            mentions_npudsl(source)
            or module in self.calling
            or (self.methods is not None and self.methods.search(source) is not None)
        )


_last: list[tuple[RunIndex, Triage]] = []  # the index of the current run and its triage


def needs_analysis(source: str, module: str, index: RunIndex | None) -> bool:
    """Whether ``source`` (the module ``module`` of a run) has anything to transform or report.

    ``index`` None: the run has no decorated file, so no file has anything to do.
    """
    if index is None:
        return False
    if not _last or _last[0][0] is not index:
        _last[:] = [(index, Triage.of(index))]
    return _last[0][1].needs(source, module)
