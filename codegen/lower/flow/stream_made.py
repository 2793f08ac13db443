"""Which names a side call may read with no keep-alive as its stream's own: results, not the caller's tensors that an
earlier call on the stream wrote.

A call reading only what calls on its stream made needs no ``record_stream``: that memory is the side stream's own
(``keep_alive.py``). The analysis also counts, among what a pending call made, every name that may share memory
with one it writes in place (``binding_aliases.py`` widens the write to the name's group, so that a later read of any
of them joins it): ``keys, scales = caches``, then ``self.quant(k, keys)`` writing ``keys``, puts ``scales`` there
too. That grouping orders reads; it says nothing of whose memory ``scales`` is. A later call on the stream given
``scales`` (``self.scale(s, scales)``, nested under the quantization's ``if``) reads a tensor the caller made, which
the caller's stream may hand to a new tensor once it is done with it, so its keep is decided as for any input.
"""

from __future__ import annotations

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.fork import same_stream
from codegen.lower.flow.sites import Site
from codegen.lower.flow.state import State, pending

__all__ = ["stream_made"]


def stream_made(state: State, site: Site, facts: CallerFacts) -> set[str]:
    """The names holding what ``site``'s stream made itself on every path (``fork.same_stream``), less those a
    pending call holds only because a write of it was widened to them."""
    own = same_stream(state, site, facts.relations)
    calls = [facts.sites[p.site] for p in pending(state)]
    widened = {n for other in calls if (view := facts.planned.views.get(other.stmt)) for n in view.names}
    return own - (widened - {n for other in calls for n in other.names})
