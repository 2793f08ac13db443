"""Files transformed alone keep the hand schedule's simulated saving where their package's other files say it is safe.

``ge_mla_waits/mla.py`` alone derives ``MLADecode`` from ``MLAWeights`` in ``layers.py``; ``same_stream_chain``'s
``prefill.py`` from a base in ``weights.py``. Read from disk for their facts (``codegen/driver/sibling_files.py``),
those bases write nothing the side calls read, so each file alone keeps the overlap the entry keeps as one run
(before: 0% of the hand saving, every base method taken to write any state).
"""

from __future__ import annotations

import pytest

from bench import overlap_kept_corpus
from bench.overlap_kept import GOAL


@pytest.mark.parametrize("name", ["ge_mla_waits", "same_stream_chain"])
def test_each_file_alone_keeps_the_hand_saving(name: str) -> None:
    alone, hand = overlap_kept_corpus.generated(name, alone=True).saving, overlap_kept_corpus.hand(name).saving
    assert hand > 0.05, "the hand schedule overlaps too little to measure anything"
    assert alone >= GOAL * hand, f"{name} alone keeps {alone / hand:.1%} of the hand saving"
