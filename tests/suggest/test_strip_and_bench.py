"""The decorator stripper the benchmark uses, and the benchmark's comparison on the simplest example."""

from __future__ import annotations

from pathlib import Path

import pytest

from npudsl.suggest.strip import strip_decorators

ROOT = Path(__file__).resolve().parents[2]


def test_strip_removes_npudsl_decorators_and_their_import_only() -> None:
    before = (
        "import functools\n\nfrom npudsl import keep_output, on_stream\n\n\n"
        '@on_stream("shared")\n@keep_output\nclass A:\n    @functools.cache\n    def f(self):\n'
        "        return 1\n"
    )
    assert strip_decorators(before) == (
        "import functools\n\n\nclass A:\n    @functools.cache\n    def f(self):\n        return 1\n"
    )


def test_strip_keeps_what_npudsl_exports_besides_decorators() -> None:
    source = "from npudsl import compile, on_stream\n\n\n@on_stream('s')\ndef f():\n    pass\n"
    assert strip_decorators(source) == "from npudsl import compile\n\n\ndef f():\n    pass\n"


def test_the_suggestion_matches_the_hand_written_core_split(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from bench.suggest_quality import compare

    hand, drawn, promised, streams = compare("core_split.py", tmp_path)
    assert streams == 1 and drawn == pytest.approx(hand) and promised == pytest.approx(drawn)
