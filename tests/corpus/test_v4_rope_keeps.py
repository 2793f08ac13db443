"""Why cann_v4_compressor keeps ``cos``/``sin`` for a side stream in every layer (docs/performance.md section 7).

``mla_prolog_decode`` and ``Indexer.forward`` are public: a caller may make ``cos`` just before the call and read
it no more, and which layer reads it last is the model's ``compress_ratios``, a constructor argument. The race
checker settles both:

- the KV branch's keep on "mla_stream": with the corpus's ratios ``(1, 4, 128, 4)`` each layer's keep is
  droppable (a later layer, or the last c4a layer's indexer keep, holds the rotary tables), but with the last
  layer a c1a one, ``(1, 4, 128, 1)``, that layer's query rotary allocates (``torch.stack``) after its own last
  read of ``cos`` while "mla_stream" may still read it: without the keeps, a race;
- the indexer's keep on "indexer_stream": one of the two c4a layers' keeps suffices at run time
  (``record_stream`` holds until the free), but which one is the model's, and without both, a race.

A rule dropping them needs what only the model's loop knows; none within CONTRACT section 2 can.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from corpus.matrix import generated_package, run_generated
from corpus.registry import ENTRIES
from npudsl import StreamRaceError

ENTRY = next(e for e in ENTRIES if e.name == "cann_v4_compressor")


def _run(root: Path, ratios: str, dropped: tuple[str, ...]) -> None:
    """The entry's portable package built with ``ratios``, without the ``cos``/``sin`` keeps of ``dropped``."""
    name, _ = generated_package(ENTRY, "portable", root)
    init = root / name / "__init__.py"
    init.write_text(re.sub(r"COMPRESS_RATIOS = \(.*\)", f"COMPRESS_RATIOS = ({ratios})", init.read_text()))
    for file_name, stream in (("attention.py", "mla_stream"), ("indexer.py", "indexer_stream")):
        path = root / name / file_name
        code = path.read_text()
        for tensor in ("cos", "sin") if stream in dropped else ():
            keep = f'runtime.record_stream({tensor}, "{stream}")'
            assert keep in code
            code = code.replace(keep, "pass")
        path.write_text(code)
    run_generated(name, root, "portable", lambda: ENTRY.inputs()[0])


@pytest.mark.parametrize("ratios", ["1, 4, 128, 4", "1, 4, 128, 1", "4, 1, 128, 4"])
def test_generated_code_is_race_free_whichever_layer_reads_last(tmp_path: Path, ratios: str) -> None:
    _run(tmp_path, ratios, ())


def test_the_kv_branch_keeps_are_droppable_only_for_the_corpus_ratios(tmp_path: Path) -> None:
    _run(tmp_path / "corpus", "1, 4, 128, 4", ("mla_stream",))
    with pytest.raises(StreamRaceError, match="mla_stream"):
        _run(tmp_path / "last_c1a", "1, 4, 128, 1", ("mla_stream",))


def test_the_indexer_keeps_are_needed_in_some_c4a_layer(tmp_path: Path) -> None:
    with pytest.raises(StreamRaceError, match="indexer_stream"):
        _run(tmp_path, "1, 4, 128, 4", ("indexer_stream",))
