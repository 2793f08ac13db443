"""The driver: find the files of a run, read and parse them once, index them, hand each to a worker, and collect
the results.

Entry: `api` (`analyze`, `transform_with_index`) for one file, `run.run` for a run. Reads paths; makes
`SourceFile`s and `FileResult`s.
"""

__all__ = ["api", "run"]
