"""Hand-written versions of the examples' and corpus entries' schedules, with ``npudsl.runtime`` calls.

One module per example or corpus entry, named after it. Each is what a careful
engineer writes for the same schedule: a wait exactly where a value crosses
streams, one event per point, a ``record_stream`` only for a tensor whose memory
could be reused while another stream may still use it. Each module defines
``Hand`` (an ``nn.Module`` built from the reference model, whose weights it uses),
``SOURCE`` (``"example:<file stem>"`` or ``"corpus:<entry>"``) and ``USER_EVENTS``
(the ``@after``/``@records`` events of the decorated source, kept as written: they
are part of the schedule, not a data dependency). ``bench/sync_minimal.py`` proves
each one race-free, equal to the reference and minimal. The calls needed only when a
caller makes the forward's inputs (``bench.sync_premise``, the default premise) are
written under ``if from_caller():``, so each version is minimal under both premises.
"""
