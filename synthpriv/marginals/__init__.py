"""Marginal-based synthesis: select marginals, measure them with the discrete Gaussian, fit one
graphical model (junction tree, mirror descent), sample rows from it (``stage.py``; selections
one_way, mst, aim).

To add a selection method: subclass ``MarginalsStage`` (``stage.py``, the shared
select–measure–estimate base) with its ``selection`` name, ``_events`` (what it will spend at
most of a given ρ, from public facts only, with the conversions of ``synthpriv.privacy.
conversions``) and ``_fit`` (measuring through ``measure_marginal`` so every measurement is
recorded in the Ledger; an adaptive method spends through ``ledger.open_filter`` and
``synthpriv.privacy.budget``); list it in ``SELECTIONS`` and ``MarginalsOptions.selection``. The
fitted model it returns goes to ``state.model`` (``estimate`` gives a ``GraphicalModel``, which
the release saves and ``synthpriv sample``/``query`` read back: synthpriv.model_store).
"""
