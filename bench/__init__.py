"""Benchmarks: run each as ``python3 bench/<name>.py`` from the repository root (see docs/performance.md)."""

__all__: list[str] = []
