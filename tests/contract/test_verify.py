"""verify_source accepts the real torchair calls and reports invented ones exactly."""

from __future__ import annotations

import textwrap

import pytest

from npu_contract import ApiTable, Problem, api_references, verify_config_paths, verify_source

# Calls known to be valid against torch-npu 2.13.0 (from the seeds / real model code).
KNOWN_GOOD = """\
import torch
import torchair

torchair.scope.npu_stream_switch("1", 0)
torchair.scope.npu_wait_tensor(a, b)
torchair.scope.limit_core_num(8, 16)
torchair.ops.npu_create_tagged_event(tag="x")
torchair.ops.npu_tagged_event_record(e)
torchair.ops.npu_tagged_event_wait(e)
torchair.ops.npu_record_tagged_stream(t, "default")
torch.npu.Stream()
torch.npu.Event()
torch.npu.stream(s)
torch.npu.set_stream_limit(s, 8, 16)
torch.npu.get_stream_limit(s)
"""


def _problems(table: ApiTable, code: str) -> list[tuple[int, int, str]]:
    return [(p.line, p.col, p.name) for p in verify_source(textwrap.dedent(code), table)]


def test_known_good_calls_pass(npu_table: ApiTable) -> None:
    assert verify_source(KNOWN_GOOD, npu_table) == []
    assert len([r for r in api_references(KNOWN_GOOD, npu_table) if r.line > 2]) == 12


def test_aliases_instances_and_config_pass(npu_table: ApiTable) -> None:
    code = """\
        import torch, torch_npu
        import torchair as tng
        from torchair.scope import npu_stream_switch as switch
        from torchair import ops

        _EVENT = ops.npu_create_tagged_event("npudsl.m.A.ev")
        _SIDE = torch_npu.npu.Stream(priority=0)
        config = tng.CompilerConfig()
        config.mode = "reduce-overhead"
        config.debug.aclgraph.clone_input = False
        backend = tng.get_npu_backend(compiler_config=config)

        def forward(x, y):
            with switch("side", 0), tng.scope.limit_core_num(op_aicore_num=8, op_vectorcore_num=16):
                _SIDE.wait_stream(torch.npu.current_stream())
                _SIDE.wait_event(torch.npu.Event(enable_timing=False))
            torch.npu.Event().record(_SIDE)
            return tng.scope.npu_wait_tensor(x, y)
        """
    assert _problems(npu_table, code) == []


def test_misspelled_function(npu_table: ApiTable) -> None:
    found = verify_source('import torchair\n\nwith torchair.scope.npu_stream_swich("1", 0):\n    pass\n', npu_table)
    assert found == [
        Problem(
            line=3,
            col=6,
            name="torchair.scope.npu_stream_swich",
            message="torchair.scope.npu_stream_swich does not exist; did you mean torchair.scope.npu_stream_switch?",
        )
    ]


def test_wrong_keyword(npu_table: ApiTable) -> None:
    code = 'import torchair\nx = 1\ntorchair.scope.npu_stream_switch(tag="1")\n'
    assert _problems(npu_table, code) == [
        (3, 1, "torchair.scope.npu_stream_switch"),  # missing stream_tag, reported at the call
        (3, 34, "torchair.scope.npu_stream_switch"),  # `tag=` itself
    ]
    messages = [p.message for p in verify_source(code, npu_table)]
    assert messages[0].startswith("missing required argument(s) stream_tag")
    assert messages[1].startswith("has no parameter 'tag'")


def test_too_many_positionals(npu_table: ApiTable) -> None:
    code = "import torchair as tng\n\n\ntng.scope.limit_core_num(8, 16, 4)\ntng.ops.npu_tagged_event_wait(e, s)\n"
    found = verify_source(code, npu_table)
    assert [(p.line, p.col) for p in found] == [(4, 33), (5, 34)]
    assert found[0].message.startswith("takes at most 2 positional argument(s), 3 given")
    assert found[1].name == "torchair.ops.npu_tagged_event_wait"


def test_misspelled_torch_npu_function(npu_table: ApiTable) -> None:
    code = "import torch\ndef f(s):\n    torch.npu.set_stream_limits(s, 8, 16)\n"
    assert _problems(npu_table, code) == [(3, 5, "torch.npu.set_stream_limits")]


def test_bad_config_path_and_value(npu_table: ApiTable) -> None:
    code = """\
        import torchair
        cfg = torchair.CompilerConfig()
        cfg.debug.aclgraph.clone_inputs = False
        cfg.aclgraph_config.use_pool = None
        cfg.mode = "reduce_overhead"
        cfg.debug.aclgraph = None
        """
    found = verify_source(textwrap.dedent(code), npu_table)
    assert [(p.line, p.col) for p in found] == [(3, 1), (4, 1), (5, 12), (6, 1)]
    assert "did you mean debug.aclgraph.clone_input?" in found[0].message
    assert "has no option aclgraph_config.use_pool" in found[1].message
    assert "'reduce_overhead' is not one of" in found[2].message
    assert "is a group of options" in found[3].message


def test_bad_import_and_instance_method(npu_table: ApiTable) -> None:
    code = "from torchair.ops import npu_tagged_event_recrd\nimport torch\nS = torch.npu.Stream()\nS.wait_evnt(e)\n"
    assert _problems(npu_table, code) == [
        (1, 26, "torchair.ops.npu_tagged_event_recrd"),
        (4, 1, "torch.npu.Stream.wait_evnt"),
    ]


def test_unindexed_torch_npu_name_is_reported(npu_table: ApiTable) -> None:
    assert _problems(npu_table, "import torch_npu\ntorch_npu.npu_format_cast(x, 2)\n") == [
        (2, 1, "torch_npu.npu_format_cast")
    ]


def test_local_names_are_ignored(npu_table: ApiTable) -> None:
    assert _problems(npu_table, "import os\nos.path.join('a')\nx.scope.npu_stream_swich(1)\n") == []


def test_syntax_error_is_a_problem(npu_table: ApiTable) -> None:
    assert [p.name for p in verify_source("def f(:\n", npu_table)] == ["<source>"]


def test_verify_config_paths(npu_table: ApiTable) -> None:
    good = ["mode", "aclgraph_config.use_custom_pool", "debug.aclgraph.disable_mempool_reuse_in_same_fx"]
    assert verify_config_paths(good, npu_table.config) == []
    bad = verify_config_paths(["debug.aclgraph", "debug.aclgraf.clone_input"], npu_table.config)
    assert [p.name for p in bad] == ["debug.aclgraph", "debug.aclgraf.clone_input"]


@pytest.mark.parametrize(
    "code, expected",
    [
        ("import torch\ns = torch.cuda.Stream(priority=-1)\ns.wait_stream(torch.cuda.current_stream())\n", []),
        ("import torch\ntorch.cuda.Event(enable_timing=True).record()\n", []),
        ("import torch\ntorch.cuda.stream(s, 1)\n", [(2, 22, "torch.cuda.stream")]),
        ("import torch\ntorch.cuda.Strem()\n", [(2, 1, "torch.cuda.Strem")]),
        ("import torch\ne = torch.cuda.Event()\ne.recrd(s)\n", [(3, 1, "torch.cuda.Event.recrd")]),
    ],
)
def test_cuda_names(cuda_table: ApiTable, code: str, expected: list) -> None:
    assert _problems(cuda_table, code) == expected
