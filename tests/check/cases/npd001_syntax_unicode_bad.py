"""NPD001 after non-ASCII text: the column counts characters, not bytes."""

from npudsl import on_stream

café = "é"  ; é2 = )  # E: NPD001@20
