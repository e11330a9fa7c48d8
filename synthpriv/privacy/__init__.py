"""The privacy layer: events and the Ledger (dp-accounting), mechanisms, randomness. No data
structures of stages and no pipeline: nothing here imports a stage, the pipeline or the
evaluation (tests/privacy/test_layering.py walks the imports).

Budget arithmetic lives here only: ρ ↔ σ ↔ ε conversions in ``conversions.py`` (named, with their
references), the plan's calibration to a target (ε, δ) in ``calibration.py`` (dp-accounting's
``calibrate_dp_mechanism`` on the Ledger's bound), and the budget object an adaptive algorithm
spends in rounds through the ledger's zCDP filter in ``budget.py``.

To add a mechanism: write it in ``mechanisms.py`` as a function of the exact answer, the noise
scale and a ``RandomSource`` (it knows nothing of budgets), with its sensitivity assumption in its
docstring; add the event it runs to ``accountant.py`` (its ρ in ``conversions.py``) with its
translation into dp-accounting (RDP, and PLD where it has one), and a test of the noise scale
against the definition. A stage then plans that event, runs the mechanism with the plan's noise and
records the event in the Ledger.
"""
