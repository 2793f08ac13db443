"""NPD001: a parameter named twice is refused when Python compiles the module."""

from npudsl import on_stream


@on_stream("side")  # W: NPD502@2
def side(x, x):  # E: NPD001@13
    return x
