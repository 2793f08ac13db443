"""The docs harness itself: an excerpt that leaves a line out unsaid fails; comments are read strictly."""

from __future__ import annotations

from pathlib import Path

import pytest

from markdown_samples import samples_of
from sample_runs import missing_piece

OUTPUT = """class A:
    def f(self, x):
        y = x + 1
        z = y * 2
        return z


def g():
    return 1
"""


def test_an_excerpt_with_every_line_of_its_pieces_is_found_at_any_indentation() -> None:
    assert missing_piece("def f(self, x):\n    y = x + 1\n    z = y * 2\n", OUTPUT) is None
    assert missing_piece("class A:\n...\n        return z\n\ndef g():\n", OUTPUT) is None


def test_an_excerpt_that_drops_a_line_unsaid_fails() -> None:
    assert missing_piece("def f(self, x):\n    y = x + 1\n    return z\n", OUTPUT) is not None


def test_pieces_must_keep_their_order_and_their_relative_indentation() -> None:
    assert missing_piece("def g():\n...\nclass A:\n", OUTPUT) is not None
    assert missing_piece("y = x + 1\nz = y * 2\n  return z\n", OUTPUT) is not None


def test_sample_comments_are_read_strictly(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("<!-- sample: output of npudsl check a.py -->\n```\nx\n```\n")
    (sample,) = samples_of(page)
    assert (sample.kind, sample.argument, sample.text, sample.line) == ("output", "npudsl check a.py", "x\n", 2)
    page.write_text("<!-- sample: skip -->\n```\nx\n```\n")
    with pytest.raises(ValueError, match="incomplete"):
        samples_of(page)
    page.write_text("<!-- sample: output npudsl check a.py -->\n```\nx\n```\n")
    with pytest.raises(ValueError, match="output of COMMAND"):
        samples_of(page)
