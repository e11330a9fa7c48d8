"""Marginal-based synthesis: select marginals, measure them with the discrete Gaussian, fit one
graphical model (junction tree, mirror descent), sample rows from it (``stage.py``; selections
one_way, mst, aim).

To add a selection method: give ``MarginalsOptions.selection`` its name, plan its events in
``MarginalsStage.plan`` (what it will spend at most for a given ρ, from public facts only) and
run it in ``MarginalsStage.run``, measuring through ``measure_marginal`` so every measurement is
recorded in the Ledger (an adaptive method spends through ``ledger.open_filter``). The fitted
model goes to ``state.model`` (``estimate`` gives a ``GraphicalModel``, which the release saves
and ``synthpriv sample``/``query`` read back: synthpriv.model_store).
"""
