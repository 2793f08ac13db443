"""``words`` finds a name as a whole word exactly where ``\\b(a|b)\\b`` does (``codegen/driver/words.py``)."""

from __future__ import annotations

import re

import pytest

from codegen.driver.words import words

_TEXTS = [
    "x = Shared()",
    "x = MyShared()",
    "x = Shared2()",
    "self.shared_expert(x)",
    "from .layers import Shared, Block",
    "Shared",
    "_Shared",
    "Block.forward",
    "Blocks",
    "é Shared é",
    "éShared",
    "",
]


@pytest.mark.parametrize("names", [{"Shared"}, {"Shared", "Block"}, {"Shared", "Shared2"}, {"a", "ab", "abc"}])
def test_words_finds_what_word_boundaries_find(names: set[str]) -> None:
    plain = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\b")
    for text in [*_TEXTS, "ab abc", "abcd a", "xab"]:
        found, expected = words(names).search(text), plain.search(text)
        assert (found and found.span()) == (expected and expected.span()), text
