"""Which parameters the functions of ``torch.nn.functional`` write in place (written by
``torch_functional_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["FUNCTIONS", "PASSED", "RAN", "TORCH_PASSED"]

# function -> the parameters named here (``@``: the position, none by keyword only; ``=``: the default is None or
# False) | each parameter it writes in place, with ``:`` and the parameters that must be given (not None, not False)
FUNCTIONS: dict[str, str] = {
    "alpha_dropout": "inplace@3= input@0 training@2= | input:inplace:training",
    "batch_norm": "running_mean@1 running_var@2 training@5= | running_mean:training running_var:training",
    "celu": "inplace@2= input@0 | input:inplace",
    "dropout": "inplace@3= input@0 training@2 | input:inplace:training",
    "dropout1d": "inplace@3= input@0 training@2 | input:inplace:training",
    "dropout2d": "inplace@3= input@0 training@2 | input:inplace:training",
    "dropout3d": "inplace@3= input@0 | input:inplace",
    "elu": "inplace@2= input@0 | input:inplace",
    "embedding": "max_norm@3= weight@1 | weight:max_norm",
    "embedding_bag": "max_norm@3= weight@1 | weight:max_norm",
    "feature_alpha_dropout": "inplace@3= input@0 training@2= | input:inplace:training",
    "hardsigmoid": "inplace@1= input@0 | input:inplace",
    "hardswish": "inplace@1= input@0 | input:inplace",
    "hardtanh": "inplace@3= input@0 | input:inplace",
    "instance_norm": "running_mean@1= running_var@2= use_input_stats@5 | running_mean:use_input_stats running_var:use_input_stats",
    "leaky_relu": "inplace@2= input@0 | input:inplace",
    "mish": "inplace@1= input@0 | input:inplace",
    "normalize": "out@4= | out",
    "relu": "inplace@1= input@0 | input:inplace",
    "relu6": "inplace@1= input@0 | input:inplace",
    "rrelu": "inplace@4= input@0 | input:inplace",
    "selu": "inplace@1= input@0 | input:inplace",
    "silu": "inplace@1= input@0 | input:inplace",
    "threshold": "inplace@3= input@0 | input:inplace",
}

# the functions the build ran (``functional_probe.py``): each writes what its row says, and nothing without one
RAN: tuple[str, ...] = (
    "alpha_dropout",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "cross_entropy",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "feature_alpha_dropout",
    "gaussian_nll_loss",
    "glu",
    "group_norm",
    "gumbel_softmax",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hinge_embedding_loss",
    "huber_loss",
    "instance_norm",
    "kl_div",
    "l1_loss",
    "leaky_relu",
    "local_response_norm",
    "log_softmax",
    "lp_pool1d",
    "margin_ranking_loss",
    "mish",
    "mse_loss",
    "multilabel_soft_margin_loss",
    "normalize",
    "poisson_nll_loss",
    "relu",
    "relu6",
    "rrelu",
    "selu",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "soft_margin_loss",
    "softmax",
    "softmin",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "triplet_margin_loss",
)

# function -> its parameters it hands back as they came, unread (``F.dropout`` in eval): each with ``:`` and one
# parameter whose taking away (None, False, 0) does it, none where a run with every parameter given does
PASSED: dict[str, str] = {
    "alpha_dropout": "input@0 p@1 training@2= | input:p input:training",
    "dropout": "input@0 p@1 training@2 | input:p input:training",
    "dropout1d": "input@0 p@1 training@2 | input:p input:training",
    "dropout2d": "input@0 p@1 training@2 | input:p input:training",
    "feature_alpha_dropout": "input@0 p@1 training@2= | input:p input:training",
}

# the same for the functions of ``torch`` whose ATen ops are composites returning a plain tensor (``aten_probe.py``):
# ``torch.dropout`` hands its input back where ``p`` is 0 or ``train`` off, though its schema makes a new tensor
TORCH_PASSED: dict[str, str] = {
    "alpha_dropout": "input@0 p@1 train@2 | input:p input:train",
    "conj_physical": "input@0 | input",
    "dropout": "input@0 p@1 train@2 | input:p input:train",
    "feature_alpha_dropout": "input@0 p@1 train@2 | input:p input:train",
    "feature_dropout": "input@0 p@1 train@2 | input:p input:train",
}
