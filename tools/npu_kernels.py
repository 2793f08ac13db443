"""What op-plugin's kernels say of an op that its schema does not: which parameters it returns as they came, and which
it hands to an aclnn call at a position where another op, declared, writes.

A torch_npu op's schema is not checked against its kernel. ``npu_kv_rmsnorm_rope_cache`` declares every tensor
plain, yet its kernel passes ``k_cache`` and ``ckv_cache`` to ``aclnnKvRmsNormRopeCache`` and returns them
(``return std::tie(k_cache, ckv_cache, k_rope, c_kv)``). The same aclnn function is called, with the same arguments
at the same positions, by ``npu_kv_rmsnorm_rope_cache_v2``, whose schema types exactly those two ``Tensor(a!)``
and the others plain: that declaration says which positions the aclnn call writes. So an op's kernel is read as
text (comments and string literals blanked) for:

- the parameters it returns as they came, per result position (every definition, every ``return``);
- the parameters it writes, where each aclnn call it makes (``EXEC_NPU_CMD(aclnnX, ...)``) is made by a declared
  op too: a parameter passed at a position every such declared call fills with a parameter its schema leaves
  plain is read; any other position may write. The kernel must touch its tensor parameters nowhere else but to
  read them (metadata, ``x.size(0)``; a copy, ``x.clone()``), through a wrapper or ``value_or`` that passes them
  on whole, or as a whole item of a return; anything more (``x.add_(1)``, a helper taking them) leaves it unread.

C++ parameters are matched to the schema's by position (op-plugin spells them in schema order, not always with the
schema's names: ``k_cache_ref`` for ``k_cache``); a kernel whose parameter count differs is not read.

Evidence looked at and not used here: the pages of ``npu_mla_prolog`` and ``npu_mla_prolog_v2`` name ``kv_cache``
and ``kr_cache`` as updated in place, and that of ``npu_apply_rotary_pos_emb`` its ``query`` and ``key``; but a page
does not say that an argument it leaves unnamed is only read. The declarations of the aclnn functions and aclops
operators such kernels call do (their ``Ref`` parameters, their inputs that are outputs too): ``npu_settled.py``
holds what they say of the ops left unknown here. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Kernel", "aclnn_positions", "kernels", "passed_written", "read_positions", "returned", "written"]

_DEF = re.compile(r"\b(\w+)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*(?:const\s*)?\{")
_EXEC = re.compile(r"\bEXEC_NPU(?:_NO_FORMAT_CHECK)?_CMD(?:_SYNC)?\s*\(")
_TENSOR = re.compile(r"(?:at::Tensor|c10::optional<at::Tensor>|at::TensorList)\s*&")
_BLANK = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"', re.S)
_WRAP = re.compile(r"\b(\w+)\s*=\s*\{\s*(\w+)\s*[,}]")  # ``TensorWrapper k_wrapper = {k_cache, dtype};``
_OPTIONAL = re.compile(r"\b(\w+)\s*=\s*(\w+)\.value_or\(")  # ``const at::Tensor &v_opt = v.value_or(...);``
# what reads a tensor without writing it: its metadata, a copy
_READS = r"\.(?:size|sizes|dim|dtype|options|scalar_type|numel|has_value|defined|device|stride|strides|clone)\s*\("


@dataclass(frozen=True)
class Kernel:
    """One C++ definition: its parameters in order (the tensor ones marked), and its body, blanked."""

    name: str
    params: tuple[str, ...]
    tensors: frozenset[str]
    body: str


def kernels(sources: str) -> dict[str, list[Kernel]]:
    """Every function definition of ``sources`` by name (an op may have several: aclops and opapi)."""
    text = _BLANK.sub(lambda m: " " * len(m.group(0)), sources)
    found: dict[str, list[Kernel]] = {}
    for match in _DEF.finditer(text):
        params = [p.strip() for p in _split(match.group(2), "<>") if p.strip()]
        names = tuple(re.findall(r"(\w+)\s*(?:=[^,]*)?$", p)[0] if re.search(r"\w$", p) else "" for p in params)
        tensors = frozenset(n for n, p in zip(names, params) if _TENSOR.search(p))
        body = _body(text, match.end())
        found.setdefault(match.group(1), []).append(Kernel(match.group(1), names, tensors, body))
    return found


def returned(kernel: Kernel) -> Iterator[tuple[int, str]]:
    """(result position, parameter) for each parameter a ``return`` hands back as it came."""
    for expr in re.findall(r"\breturn\s+([^;]*);", kernel.body):
        wrapped = re.fullmatch(r"\s*std::(?:tie|make_tuple|tuple\s*<[^;]*?>)\s*\((.*)\)\s*", expr, re.S)
        items = _split(wrapped.group(1)) if wrapped else [expr]
        for position, item in enumerate(items):
            if item.strip() in kernel.tensors:
                yield position, item.strip()


def aclnn_positions(kernel: Kernel) -> Iterator[tuple[str, list[str | None]]]:
    """Each aclnn call the kernel makes: its function, and per argument the parameter passed there whole (through
    a wrapper or ``value_or``), else None."""
    aliases = _aliases(kernel)
    for match in _EXEC.finditer(kernel.body):
        args = [a.strip() for a in _split(_body(kernel.body, match.end(), "(", ")")[:-1])]
        yield args[0], [aliases.get(a) for a in args[1:]]


def read_positions(declared: list[tuple[Kernel, set[str]]]) -> dict[str, frozenset[int]]:
    """Per aclnn function the declared kernels call (each with the parameters its schema writes), the positions
    every such call fills with a parameter the schema leaves plain; a function called with argument lists of two
    lengths is left out (which position is which is not known)."""
    found: dict[str, frozenset[int]] = {}
    lengths: dict[str, set[int]] = {}
    for kernel, writes in declared:
        for function, args in aclnn_positions(kernel):
            lengths.setdefault(function, set()).add(len(args))
            plain = frozenset(i for i, p in enumerate(args) if p is not None and p not in writes)
            found[function] = found[function] & plain if function in found else plain
    return {function: plain for function, plain in found.items() if len(lengths[function]) == 1}


def written(kernel: Kernel, reads: dict[str, frozenset[int]]) -> set[str] | None:
    """The tensor parameters the kernel may write: those passed at a position no declared call reads only; None
    where an aclnn call is made by no declared op, or a parameter is touched otherwise (see above)."""
    if any(function not in reads for function, _ in aclnn_positions(kernel)) or not _touched_only_so(kernel):
        return None
    return passed_written(kernel, reads)


def passed_written(kernel: Kernel, reads: dict[str, frozenset[int]]) -> set[str]:
    """The tensor parameters the kernel hands to an aclnn call a declared op makes, at a position not read only."""
    found: set[str] = set()
    for function, args in aclnn_positions(kernel):
        if function in reads:
            found |= {p for i, p in enumerate(args) if p is not None and i not in reads[function]}
    return found


def _aliases(kernel: Kernel) -> dict[str, str]:
    """Name -> the tensor parameter it is: the parameter itself, a wrapper of it, its ``value_or``."""
    found = {p: p for p in kernel.tensors}
    for pattern in (_WRAP, _OPTIONAL):
        found.update({m.group(1): m.group(2) for m in pattern.finditer(kernel.body) if m.group(2) in kernel.tensors})
    return found


def _touched_only_so(kernel: Kernel) -> bool:
    """Every mention of a tensor parameter (or its alias) reads its metadata or copies it, is a whole argument of an
    aclnn call or a whole item of a return, or defines an alias."""
    spans = [m.span() for m in re.finditer(r"\breturn\s+[^;]*;", kernel.body)]
    spans += [(m.start(), m.end() + len(_body(kernel.body, m.end(), "(", ")"))) for m in _EXEC.finditer(kernel.body)]
    aliases = [m.span() for pattern in (_WRAP, _OPTIONAL) for m in pattern.finditer(kernel.body)]
    for name in _aliases(kernel):
        for use in re.finditer(rf"\b{name}\b", kernel.body):
            after, before = kernel.body[use.end() :], kernel.body[: use.start()]
            whole = re.match(r"\s*[,)};]", after) and re.search(r"[(,{]\s*$|\breturn\s+$", before)
            if any(a <= use.start() < b for a, b in aliases) or re.match(_READS, after):
                continue
            if not (whole and any(a <= use.start() < b for a, b in spans)):
                return False
    return True


def _split(text: str, angles: str = "") -> list[str]:
    """``text`` split at its top-level commas (not those inside brackets or braces, or ``angles``: a template's)."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(text):
        if char in "([{" + angles[:1]:
            depth += 1
        elif char in ")]}" + angles[1:]:
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:at])
            start = at + 1
    return [*parts, text[start:]]


def _body(text: str, start: int, opening: str = "{", closing: str = "}") -> str:
    """The text from ``start`` (just after an opening bracket) to its matching closing one, that one included."""
    depth, at = 1, start
    while depth and at < len(text):
        depth += {opening: 1, closing: -1}.get(text[at], 0)
        at += 1
    return text[start:at]
