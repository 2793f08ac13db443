"""NPD001: Python parses a `break` outside a loop but refuses to compile it."""

from npudsl import on_stream


@on_stream("side")  # W: NPD502@2
def side(x):
    if x is None:
        break  # E: NPD001@9
    return x
