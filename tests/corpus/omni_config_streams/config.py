"""Process-wide switches, read at call time by the stream functions of :mod:`.ops`.

Shaped after omni-infer's ``model_extra_config`` (``omni/models/common/config/model_config.py``),
a module-level object imported by the model files, and after a plain module flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MULTISTREAM = True


@dataclass
class OperatorOptConfig:
    moe_multi_stream_tune: bool = True


@dataclass
class ModelExtraConfig:
    operator_opt_config: OperatorOptConfig = field(default_factory=OperatorOptConfig)


model_extra_config = ModelExtraConfig()


def configure(multistream: bool) -> None:
    global MULTISTREAM
    MULTISTREAM = multistream
    model_extra_config.operator_opt_config.moe_multi_stream_tune = multistream
