"""NPD001: a syntax error, reported where Python reports it."""

from npudsl import on_stream


@on_stream("side")
def broken(x):
    return (x +* 2)  # E: NPD001@16
