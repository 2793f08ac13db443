"""A synthetic but realistic corpus of model files for the transform benchmark.

Every file is plain ``nn.Module`` code (attention, MLP, norm, MoE blocks). One
file in ``decorated_every`` also uses every npudsl decorator: a shared expert
class on a side stream, a manual side branch with ``@after``/``@records``, core
limits and ``@keep_output``, with the call sites in the same file. A few
undecorated files import a decorated class and call it (cross-file call sites).
"""

from __future__ import annotations

import os
import random

import attrs

from bench.corpus_templates import CALLER, CALLER_IMPORT, DECORATED, PLAIN_BLOCKS, PLAIN_HEADER

__all__ = ["Corpus", "generate"]


@attrs.frozen(kw_only=True)
class Corpus:
    root: str
    decorated: tuple[str, ...]
    undecorated: tuple[str, ...]

    @property
    def all_files(self) -> tuple[str, ...]:
        return self.decorated + self.undecorated


def _sizes(rng: random.Random) -> dict[str, int]:
    hidden = rng.choice([256, 512, 1024, 2048, 4096])
    return {
        "hidden": hidden,
        "inter": hidden * rng.choice([2, 3, 4]),
        "heads": rng.choice([8, 16, 32]),
        "experts": rng.choice([8, 16, 64]),
        "top_k": rng.choice([1, 2, 4]),
        "prio": rng.choice([0, 0, 1]),
    }


def _plain_body(rng: random.Random, n: int, blocks: int) -> str:
    chosen = [rng.choice(PLAIN_BLOCKS) for _ in range(blocks)]
    return "\n\n".join(block.format(n=f"{n}_{i}", **_sizes(rng)) for i, block in enumerate(chosen))


def _write(root: str, name: str, text: str) -> str:
    path = os.path.join(root, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def generate(
    root: str, *, files: int = 400, decorated_every: int = 10, blocks: int = 3, decorated_blocks: int = 8, seed: int = 0
) -> Corpus:
    """Write ``files`` modules under ``root/models`` (a package) and return their paths.

    A decorated file holds the decorated block among ``decorated_blocks`` plain ones: decorators
    live in the big model files (a decoder layer's file), not in every small helper module.
    """
    rng = random.Random(seed)
    package = os.path.join(root, "models")
    os.makedirs(package, exist_ok=True)
    _write(package, "__init__.py", "")
    decorated: list[str] = []
    undecorated: list[str] = []
    for n in range(files):
        body = _plain_body(rng, n, decorated_blocks if n % decorated_every == 0 else blocks)
        if n % decorated_every == 0:
            text = PLAIN_HEADER + DECORATED.format(n=n, **_sizes(rng)) + "\n\n" + body + "\n"
            decorated.append(_write(package, f"block_{n:04d}.py", text))
            continue
        text = PLAIN_HEADER + body + "\n"
        if n % decorated_every == 1:
            caller = CALLER.format(n=n, src=n - 1, **_sizes(rng))
            text = PLAIN_HEADER + CALLER_IMPORT.format(src=n - 1) + "\n\n" + body + "\n\n\n" + caller
        undecorated.append(_write(package, f"block_{n:04d}.py", text))
    return Corpus(root=package, decorated=tuple(decorated), undecorated=tuple(undecorated))
