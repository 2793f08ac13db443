"""A corpus of small CPU models shaped after real hand-written Ascend multi-stream code.

Each entry is a package ``corpus.<name>`` holding the decorated model (one or
several modules), its undecorated single-stream twin (``twin.py``) and an
``__init__`` exposing ``build()``, ``build_twin()``, ``example_inputs()``,
``IDIOMS`` and ``UPSTREAM``. :mod:`corpus.registry` lists them; README.md has
the table of entries, upstream files and idioms.
"""
