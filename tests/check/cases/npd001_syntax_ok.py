"""Modern syntax parses: match, walrus, positional-only parameters, f-strings."""

from npudsl import on_stream


@on_stream("side")
def fine(x, /, *, scale=2):
    match x:
        case [first, *rest]:
            return first, rest
        case _:
            pass
    if (y := x * scale) is not None:
        return f"{y!r:>{scale}}"
    return x


def caller(x):
    out = fine(x)
    return out
