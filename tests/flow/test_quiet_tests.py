"""Which ``if`` tests run no op (``quiet_tests.py``): one reading for ``if_in_block.py`` and ``ge_before.works``.

``identity_test`` (the side stream may read the test: no op at all) is the stricter: names and constants compared
by identity. ``compares_only`` (a captured graph allocates nothing for the test) also takes other comparisons,
attributes and bare names. Neither takes a call, an index or arithmetic.
"""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow.quiet_tests import compares_only, identity_test


@pytest.mark.parametrize(
    ("test", "identity", "compared"),
    [
        ("x is None", True, True),
        ("kv is not None and scale is not None", True, True),
        ("not (a is None or b is None)", True, True),
        ("x", False, True),  # a name's truth may be a tensor's
        ("self.compress_ratio == 4", False, True),
        ("self.x is None", False, True),
        ("n > 0 and not self.flag", False, True),
        ("-x > 0", False, False),
        ("len(xs) > 0", False, False),
        ("xs[0] is None", False, False),
        ("x + 1 == y", False, False),
    ],
)
def test_quiet_tests(test: str, identity: bool, compared: bool) -> None:
    node = ast.parse(test, mode="eval").body
    assert identity_test(node) is identity and compares_only(node) is compared
