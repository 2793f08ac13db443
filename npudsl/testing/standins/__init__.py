"""Stand-ins for the device APIs that generated code calls, for tests on a CPU-only machine.

``installed(target)`` puts in place what the generated code of a target calls:
a ``torchair`` module (aclgraph, ge) whose ops have torch-npu 2.13.0's schemas
(:mod:`._ops`), and ``torch.cuda`` / ``torch.npu`` streams and events (cuda,
npugraph_ex) that lower to npudsl's runtime ops (:mod:`._device`). Under them,
``torch.compile(..., fullgraph=True)`` traces generated code of every target,
and :func:`checking_backend` checks each graph with npudsl's race checker after
:func:`lower` maps the torchair ops onto the runtime ops.

How dynamo traces the stand-ins (torch 2.13), found by experiment:

- Patched module attributes (``torch.cuda.Stream``, ``torch.cuda.stream``,
  ``torch.cuda.current_stream``, a ``torch.npu`` module) are read when traced, so
  the stand-ins are inlined as user code: methods of stand-in streams and events
  (``wait_event``, ``record``, ``wait_stream``) and the stream context manager
  trace into their runtime ops, and nothing of the objects reaches the graph.
  This needs dynamo's tables of torch objects filled before patching (done by
  :func:`device_installed`); filled while patched, dynamo would put the stand-in
  class itself into the graph as an in-graph constructor.
- ``tensor.record_stream(s)`` is not: dynamo handles that tensor method itself
  and accepts only its own stream objects ("record_stream() expects a Stream
  argument"), whatever ``torch.Tensor.record_stream`` is. :func:`load` in
  :mod:`npudsl.testing.targets` therefore rewrites ``x.record_stream(s)`` calls
  into :func:`record_stream` (a module-level helper) before compiling the source.
- A stream or event constructed while tracing raises :class:`StandinError`
  (dynamo reports it as an exception in the compiled region): they must exist
  before it, as on the device, where dynamo rebuilds them as plain
  ``torch.Stream`` objects and recompiles.
- ``torch.npu.get_stream_limit``/``set_stream_limit``/``reset_stream_limit`` are
  ``torch._dynamo.disable``-d, so a ``fullgraph=True`` trace fails on them as it
  does on the real C bindings; ``torch.npu.npugraph_ex.scope.limit_core_num``
  traces into a scope marker.
- The torchair functions are plain functions over custom ops: inlined, each op
  one graph node. ``npu_wait_tensor``'s result discarded still orders later uses
  of ``self`` after ``aot_autograd``: its Meta kernel returns ``self``, so
  functionalization reads ``self`` through the wait's output from then on.
"""

from npudsl.testing.standins._backend import checking_backend, copy_graph
from npudsl.testing.standins._config import CompilerConfig, NpuGraphExConfig
from npudsl.testing.standins._device import Device, Event, StandinError, Stream, record_stream
from npudsl.testing.standins._install import TARGETS, device_installed, installed, torchair_installed
from npudsl.testing.standins._lower import lower
from npudsl.testing.standins._ops import AIR, NPUGRAPH_EX, SCHEMAS, OpSpec
from npudsl.testing.standins._torchair import TaggedEvent

__all__ = [
    "AIR",
    "NPUGRAPH_EX",
    "SCHEMAS",
    "TARGETS",
    "CompilerConfig",
    "Device",
    "Event",
    "NpuGraphExConfig",
    "OpSpec",
    "StandinError",
    "Stream",
    "TaggedEvent",
    "checking_backend",
    "copy_graph",
    "device_installed",
    "installed",
    "lower",
    "record_stream",
    "torchair_installed",
]
