"""Evaluation of a release: utility (marginal TVD, associations, TSTR, quality report) and privacy
(membership attacks, controls, anonymeter, the marginal attack, shadow runs), on seeded samples of
the tables (``sampling``). Nothing here reaches the release: the report is a separate output.

How to add an attack on the released table: write a function of one
:class:`~synthpriv.evaluation.attacks.AttackInputs` that returns one score per target (higher:
"member") and list it with ``@_registered(name, attack)`` in :mod:`synthpriv.evaluation.attacks`
(``MEMBERSHIP_ATTACKS``); the attack function declares its weakest threat model with
``_requires``. Every evaluation then runs it and reports its AUC and empirical ε lower bound.
An attack that re-runs the job (shadow tables) belongs beside :mod:`.shadow` and
:mod:`.marginal_attack`, called from :func:`.evaluate.evaluate_sources`.
"""
