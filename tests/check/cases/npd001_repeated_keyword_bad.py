"""NPD001: a keyword argument given twice is refused when Python compiles the module."""

from npudsl import on_stream


def scale(x, factor=1):
    return x * factor


@on_stream("side")  # W: NPD502@2
def side(x):
    return scale(x, factor=2, factor=3)  # E: NPD001@31
