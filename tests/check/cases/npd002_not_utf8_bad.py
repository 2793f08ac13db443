"""NPD002: this file is Latin-1, not UTF-8."""

from npudsl import on_stream

name = "café"  # E: NPD002@12
