"""Names the generated code defines: event variables, their process-global tags, fresh locals."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["event_tag", "event_var", "fresh_name", "snake", "sync_var", "upper_snake"]


# Word boundaries: ``fooBar``, ``HTTPServer``, ``DeepseekV2``; a capital that is not followed by a lower-case
# letter stays with the word before it (``MoE``, ``LongcatFlashMoE``).
_WORDS = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[a-z])(?=[A-Z][0-9])")


def upper_snake(name: str) -> str:
    """``MoELayer`` -> ``MOE_LAYER``; ``LongcatFlashMoE`` -> ``LONGCAT_FLASH_MOE``; ``shared_expert`` ->
    ``SHARED_EXPERT``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", _WORDS.sub("_", name)).strip("_").upper()


def snake(name: str) -> str:
    """``multiStream`` -> ``multi_stream``: a local variable named after a dotted name's last part."""
    return upper_snake(name).lower() or "flag"


def event_var(event: str, owner: str | None, *, shared: bool) -> str:
    """A user event's variable; qualified by its class when another class uses the same name."""
    if shared and owner:
        return f"_{upper_snake(owner)}_{upper_snake(event)}"
    return f"_{upper_snake(event)}"


def sync_var(owner: str | None, name: str, role: str, *, class_level: bool, shared: bool) -> str:
    """The fork or join event of a stream function: ``_SHARED_EXPERT_JOIN``."""
    if class_level:
        base = upper_snake(owner or name)
    elif shared and owner:
        base = f"{upper_snake(owner)}_{upper_snake(name)}"
    else:
        base = upper_snake(name)
    return f"_{base}_{role.upper()}"


def event_tag(module: str, owner: str | None, *parts: str) -> str:
    """Unique per module, class and name, as torchair needs (tags are process-global)."""
    return ".".join(p for p in (module, owner, *parts) if p)


def fresh_name(base: str, taken: Iterable[str]) -> str:
    used = set(taken)
    if base not in used:
        return base
    n = 1
    while f"{base}_{n}" in used:
        n += 1
    return f"{base}_{n}"
