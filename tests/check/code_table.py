"""docs/check.md's table of codes, made from ``npudsl.codes.TABLE`` (run this file to rewrite it in place).

tests/check/test_codes.py fails while the page and the table disagree, so a code
added, retitled or given another severity shows on the page the same day.
"""

from __future__ import annotations

import sys
from pathlib import Path

from npudsl.codes import TABLE

__all__ = ["BEGIN", "DOCS", "END", "page_with_table", "rendered"]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "check.md"
BEGIN = "<!-- codes: made from npudsl/codes.py by `python tests/check/code_table.py`; do not edit by hand -->"
END = "<!-- end of codes -->"


def rendered() -> str:
    """The markdown table: one row per code, in code order."""
    rows = ["| code | severity | reported by | what | fix |", "| --- | --- | --- | --- | --- |"]
    for code in sorted(TABLE.values(), key=lambda c: c.id):
        cells = (code.id, code.severity.value, code.origin, code.title, code.fix)
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


def page_with_table(page: str) -> str:
    """``page`` with the text between the markers replaced by :func:`rendered`."""
    head, _, rest = page.partition(BEGIN + "\n")
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{rendered()}{END}{tail}"


if __name__ == "__main__":
    DOCS.write_text(page_with_table(DOCS.read_text(encoding="utf-8")), encoding="utf-8")
    sys.exit(0)
