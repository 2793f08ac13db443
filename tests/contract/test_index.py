"""The index read from the real torch-npu 2.13.0 sources has the APIs npudsl emits."""

from __future__ import annotations

import pytest

from npu_contract import ApiKind, ApiTable, ParamKind

POK = ParamKind.POSITIONAL_OR_KEYWORD

# name -> [(parameter, has default)], as found in torch-npu 2.13.0
EXPECTED = {
    "torchair.scope.npu_stream_switch": [
        ("stream_tag", False),
        ("stream_priority", True),
        ("enable_inner_parallel", True),
    ],
    "torchair.scope.npu_wait_tensor": [("self", False), ("dependency", False)],
    "torchair.scope.limit_core_num": [("op_aicore_num", False), ("op_vectorcore_num", False)],
    "torchair.scope.super_kernel": [("scope", False), ("options", True)],
    "torchair.ops.npu_create_tagged_event": [("tag", False)],
    "torchair.ops.npu_tagged_event_record": [("event", False)],
    "torchair.ops.npu_tagged_event_wait": [("event", False)],
    "torchair.ops.npu_record_tagged_stream": [("input", False), ("tagged_stream", False)],
    "torch.npu.stream": [("stream", False)],
    "torch.npu.current_stream": [("device", True)],
    "torch.npu.set_stream_limit": [("stream", False), ("cube_num", True), ("vector_num", True)],
    "torch.npu.get_stream_limit": [("stream", False)],
    "torch.npu.reset_stream_limit": [("stream", False)],
    "torch.npu.graph_pool_handle": [],
    "torch.npu.Event": [("enable_timing", True), ("blocking", True), ("interprocess", True)],
    "torch.npu.Event.record": [("stream", True)],
    "torch.npu.Event.wait": [("stream", True)],
    "torch.npu.Stream.wait_event": [("event", False)],
    "torch.npu.Stream.wait_stream": [("stream", False)],
    "torch.npu.Stream.record_event": [("event", True)],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_signature(npu_table: ApiTable, name: str) -> None:
    entry = npu_table.entries[name]
    assert [(p.name, p.has_default) for p in entry.params] == EXPECTED[name]
    assert all(p.kind is POK for p in entry.params)


def test_stream_constructor_and_kinds(npu_table: ApiTable) -> None:
    stream = npu_table.entries["torch.npu.Stream"]
    assert stream.kind is ApiKind.CLASS and not stream.closed  # base class is compiled code
    assert [(p.name, p.kind) for p in stream.params] == [
        ("device", POK),
        ("priority", POK),
        ("kwargs", ParamKind.VAR_KEYWORD),
    ]
    assert npu_table.entries["torchair.CompilerConfig"].params == ()


def test_get_npu_backend_is_keyword_only(npu_table: ApiTable) -> None:
    params = npu_table.entries["torchair.get_npu_backend"].params
    assert [(p.name, p.kind) for p in params] == [
        ("compiler_config", ParamKind.KEYWORD_ONLY),
        ("custom_decompositions", ParamKind.KEYWORD_ONLY),
    ]


def test_record_stream_is_not_torch_npu(npu_table: ApiTable) -> None:
    assert not any(name.endswith(".record_stream") for name in npu_table.entries)


@pytest.mark.parametrize(
    "path, default, choices",
    [
        ("mode", "max-autotune", ("max-autotune", "reduce-overhead", "npugraph_ex")),
        ("aclgraph_config.use_custom_pool", None, None),
        ("debug.aclgraph.disable_mempool_reuse_in_same_fx", False, (True, False)),
        ("debug.aclgraph.clone_input", True, (True, False)),
        ("debug.aclgraph.enable_output_clone", False, (True, False)),
        ("debug.aclgraph.static_capture_size_limit", 64, None),
    ],
)
def test_config_leaves(npu_table: ApiTable, path: str, default: object, choices: object) -> None:
    leaf = npu_table.config.leaves[path]
    assert (leaf.default, leaf.choices) == (default, choices)


def test_config_groups(npu_table: ApiTable) -> None:
    assert {"debug", "debug.aclgraph", "aclgraph_config", "experimental_config.aclgraph"} <= npu_table.config.nodes
    assert "debug.aclgraph" not in npu_table.config.leaves
    assert "_fixed_attrs" not in npu_table.config.leaves


def test_cuda_table_from_installed_torch(cuda_table: ApiTable) -> None:
    names = [
        "torch.cuda.Stream",
        "torch.cuda.Event",
        "torch.cuda.stream",
        "torch.cuda.Stream.wait_event",
        "torch.cuda.Stream.wait_stream",
        "torch.cuda.Event.record",
        "torch.cuda.Event.wait",
    ]
    assert all(n in cuda_table.entries for n in names)
    assert [p.name for p in cuda_table.entries["torch.cuda.Stream.wait_event"].params] == ["event"]
