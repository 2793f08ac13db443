"""Which parameters the functions of ``torch.nn.functional`` write in place (written by
``torch_functional_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["FUNCTIONS"]

# function -> the parameters named here (``@``: the position, none by keyword only; ``=``: the default is None or
# False) | each parameter it writes in place, with ``:`` and the parameters that must be given (not None, not False)
FUNCTIONS: dict[str, str] = {
    "alpha_dropout": "inplace@3= input@0 | input:inplace",
    "celu": "inplace@2= input@0 | input:inplace",
    "dropout": "inplace@3= input@0 | input:inplace",
    "dropout1d": "inplace@3= input@0 | input:inplace",
    "dropout2d": "inplace@3= input@0 | input:inplace",
    "dropout3d": "inplace@3= input@0 | input:inplace",
    "elu": "inplace@2= input@0 | input:inplace",
    "embedding": "max_norm@3= weight@1 | weight:max_norm",
    "embedding_bag": "max_norm@3= weight@1 | weight:max_norm",
    "feature_alpha_dropout": "inplace@3= input@0 | input:inplace",
    "gaussian_nll_loss": "var@2 | var",
    "hardsigmoid": "inplace@1= input@0 | input:inplace",
    "hardswish": "inplace@1= input@0 | input:inplace",
    "hardtanh": "inplace@3= input@0 | input:inplace",
    "leaky_relu": "inplace@2= input@0 | input:inplace",
    "mish": "inplace@1= input@0 | input:inplace",
    "relu": "inplace@1= input@0 | input:inplace",
    "relu6": "inplace@1= input@0 | input:inplace",
    "rrelu": "inplace@4= input@0 | input:inplace",
    "selu": "inplace@1= input@0 | input:inplace",
    "silu": "inplace@1= input@0 | input:inplace",
    "threshold": "inplace@3= input@0 | input:inplace",
}
