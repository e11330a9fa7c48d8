"""The privacy layer: events and the Ledger (dp-accounting), mechanisms, randomness. No data
structures of stages and no pipeline: nothing here imports a stage, the pipeline or the
evaluation (tests/privacy/test_layering.py walks the imports).

To add a mechanism: write it in ``mechanisms.py`` as a function of the exact answer, the noise
scale and a ``RandomSource`` (it knows nothing of budgets), with its sensitivity assumption in its
docstring; add the event it runs to ``accountant.py`` with its translation into dp-accounting (RDP,
and PLD where it has one), and a test of the noise scale against the definition. A stage then plans
that event, runs the mechanism with the plan's noise and records the event in the Ledger.
"""
