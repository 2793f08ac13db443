"""Attention metadata objects, as the model runner builds them (no tensors are made here)."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class DecodeMetadata:
    cos: torch.Tensor
    sin: torch.Tensor


@dataclass
class AttentionMetadata:
    num_decodes: int
    num_prefills: int
    num_decode_tokens: int
    slot_mapping: torch.Tensor
    decode: DecodeMetadata | None = None
    with_prefill: bool = False
