"""NPD513 (warning): a ``when`` guard or dotted core count reads an attribute its class never sets.

Unlike NPD205 the name is close to nothing the class defines, so it may be set from outside
(``layer.multistream = cfg.overlap`` after construction), which the source of the class cannot
show. If it is not, the first call fails; set it in ``__init__`` (or as a class attribute) so that
``check`` can see it, or silence this line with ``# noqa: NPD513``.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.unknown_attribute import message, unknown_attributes
from npudsl import codes

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    for unknown in unknown_attributes(ctx):
        if unknown.close is None:
            attribute = unknown.dotted.split(".")[1]
            place = (
                f"set self.{attribute} in {unknown.owner}.__init__ (or give {unknown.owner} a class attribute)"
                if unknown.on_instance
                else f"give class {unknown.owner} an attribute {attribute}"
            )
            yield Finding(
                loc=unknown.loc,
                message=message(unknown) + "; the first call fails unless something outside the class sets it",
                hint=f"{place}, or # noqa: {codes.UNDEFINED_ATTRIBUTE} where it is set from outside",
            )


RULE = Rule(code=codes.UNDEFINED_ATTRIBUTE, find=_find)
