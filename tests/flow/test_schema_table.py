"""The ATen table the transformer reads is what the pinned torch's schemas say, and answers by schema."""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow import schema
from codegen.lower.flow.schema_build import TABLE, build
from codegen.lower.flow.writes import inplace_writes


def test_the_table_is_rebuilt_from_torch_unchanged() -> None:
    pytest.importorskip("torch")
    assert TABLE.read_text(encoding="utf-8") == build(), "run: python -m codegen.lower.flow.schema_build"


@pytest.mark.parametrize(
    ("name", "writes", "views", "one", "several"),
    [
        ("add_", True, False, True, False),
        ("record_stream", True, False, False, False),  # writes ``self`` with no trailing underscore
        ("squeeze", False, True, True, False),
        ("reshape", False, False, True, False),  # may copy: a composite op reads the data
        ("topk", False, False, False, True),
        ("sort", False, False, False, True),  # the list overload that sorts in place is not a tensor's
        ("max", False, False, False, False),  # one tensor or two, by overload
    ],
)
def test_facts_by_schema(name: str, writes: bool, views: bool, one: bool, several: bool) -> None:
    assert (schema.writes_self(name), schema.views_self(name)) == (writes, views)
    assert (schema.one_tensor(name), schema.tensors_only(name)) == (one, several)


@pytest.mark.parametrize(
    ("line", "written"),
    [
        ("h.record_stream(s)", {"h"}),
        ("h.add(1)", set()),
        ("h.npu_fused_op_(x)", {"h"}),  # a custom op outside the table: the in-place spelling decides
        ("acc.append(t)", {"acc"}),
    ],
)
def test_in_place_writes_follow_the_schema(line: str, written: set[str]) -> None:
    assert inplace_writes(ast.parse(line).body[0]) == written
