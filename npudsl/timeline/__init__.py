"""The schedule picture: a model's captured graph as a timeline, one lane per stream.

``npudsl schedule FILE [-o OUT.svg | -o OUT.json] [--model NAME] [--inputs FUNC]``
(see :mod:`npudsl.timeline.cli`), or :func:`picture` from Python. The model is
transformed for the ``portable`` target in-process, its graph captured by
``torch.compile(fullgraph=True)`` with a recording backend, every op placed on
its stream (``torch.ops.npudsl.stream_enter`` / ``stream_exit``), and a
list-scheduling simulation (stream order, event waits) predicts the time saved
over one stream. Importing this package does not import torch; :func:`picture` does.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Picture", "picture"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from npudsl.timeline import draw as module

        return getattr(module, name)
    raise AttributeError(name)
