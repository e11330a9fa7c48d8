"""The DP-SGD generator stage: an autoregressive network over the encoded columns trained with
Opacus, optionally guided by the marginals stage's model (recipes dpsgd, hybrid).

To add a stage (here or elsewhere): subclass ``synthpriv.stage.Stage`` with a ``name``, an
``Options`` model (unknown keys are errors), ``plan(rho)`` (its events and calibrated noise from
public facts only) and ``run`` (mechanisms with the plan's noise, each event recorded in the
Ledger), and its contract (``requires``/``provides``: what it needs from the stages before it and
what it leaves, checked when the job is planned); decorate it with ``@register`` and name its
module in ``pipeline.STAGE_MODULES`` so a recipe (``pipelines/*.yaml``) can use it. A model it
leaves in ``state.model`` is saved with the release when ``synthpriv.model_store`` knows its kind.
"""
