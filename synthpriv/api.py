"""The Python API: ``Synthesizer``, a thin shell over the job object (synthpriv.job).

    from synthpriv import Synthesizer
    synthetic = Synthesizer(epsilon=1.0).fit(df).sample(1000)   # no schema: drafted safely

or, with a schema:

    synth = Synthesizer(schema="schema.yaml", epsilon=1.0, delta=1e-6, recipe="aim")
    synth.plan()                      # the noise each stage will add; reads no data
    synth.fit(df)                     # a pandas DataFrame, or a CSV/Parquet path
    synth.sample(1000)                # more rows from the fitted DP model (no budget)
    synth.release("out/adult")        # synthetic.csv + model + manifest.json, atomically
    again = Synthesizer.load("out/adult")   # a release's model: sample/query, no refit

The budget, recipe and stage options are a job config built in memory, so a fit here is the
same job ``synthpriv run`` runs: the same plan, ledger, refusals and release.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthpriv.errors import ConfigError, SynthprivWarning

if TYPE_CHECKING:
    import pandas as pd

    from synthpriv.config import Job
    from synthpriv.job import Fitted, SynthesisJob
    from synthpriv.plan import Plan
    from synthpriv.released_model import ReleasedModel
    from synthpriv.schema import Schema

IN_MEMORY = "<DataFrame>"  # data.path of a job whose input is a DataFrame (never read)


@dataclass(frozen=True)
class EvaluationResult:
    """Headline figures of an evaluation (reads the real data: NOT part of the DP release).

    ``tvd`` maps a marginal order (1, 2, 3) to the mean total variation distance between real
    and synthetic marginals of that order; ``tstr_auc``/``trtr_auc`` are train-synthetic/
    train-real test-real AUCs (classification target), ``tstr_r2`` the R² (regression);
    ``attack_auc`` the worst membership attack's AUC and ``epsilon_lower_bound`` the empirical ε
    it implies (None when no holdout was given). ``report`` is the full report."""

    tvd: dict[int, float]
    association_diff: float | None
    tstr_auc: float | None
    trtr_auc: float | None
    tstr_r2: float | None
    attack_auc: float | None
    epsilon_lower_bound: float | None
    report: dict = field(repr=False)


class Synthesizer:
    """A differentially private synthesizer: plan, fit, sample, release, evaluate, load.

    ``schema``: a ``Schema``, a mapping as in a schema YAML, or a path to one; or None (the
    default): ``fit`` then drafts it from the data's column names only, every column ``kind:
    auto`` (``infer_schema(data, safe=True)``), and the run decides kinds, bounds and categories
    under DP on the same budget; ``synth.schema`` shows what was decided. ``epsilon``,
    ``delta``, ``neighbouring``: the budget (``budget.*`` in a job config; the relation defaults
    to the config's). ``recipe``: aim
    (default), mst, independent, dpsgd, hybrid, or a recipe file. Stage options are keyword
    arguments named after the stage: ``marginals={"max_bins": 16}``. ``records``: rows to
    release (default: the public count, else the DP estimate); ``public_records``: the input's
    row count when it is public. ``person``, ``rows_per_person``: the column that identifies a
    person and the most rows one contributes (``data.person``: the guarantee is then per person;
    docs/privacy.md). ``seed``: a research seed (the release is then NOT private).
    ``progress``: show the fit's steps on stderr (a tqdm bar).
    """

    def __init__(
        self, schema: Schema | Mapping[str, Any] | str | Path | None = None, epsilon: float = 1.0,
        delta: float = 1e-6, recipe: str = "aim", *, neighbouring: str | None = None,
        records: int | None = None, public_records: int | None = None, seed: int | None = None,
        name: str = "synthpriv", progress: bool = False, person: str | None = None,
        rows_per_person: int | None = None, **stages: Mapping[str, Any],
    ) -> None:
        from synthpriv.schema import Schema

        if type(schema).__name__ == "DataFrame":
            raise ConfigError(
                "Synthesizer(schema=...) takes a schema, not the data: give the DataFrame to fit, "
                "as in Synthesizer(epsilon=1.0).fit(df), which drafts a safe schema from its "
                "column names.")
        if isinstance(schema, Schema):
            schema = schema.model_dump(mode="json")
        elif isinstance(schema, str | Path):
            schema = Path(schema).resolve()
        elif schema is not None and not isinstance(schema, Mapping):
            raise ConfigError(f"schema: give a Schema, a mapping, a YAML path or None (drafted "
                              f"at fit), not {type(schema).__name__}.")
        self._config: dict[str, Any] = {
            "name": name,
            "data": {"path": IN_MEMORY, "schema": schema if isinstance(schema, Path | None)
                     else dict(schema), "public_records": public_records,
                     **({} if person is None else {"person": person,
                                                   "rows_per_person": rows_per_person})},
            "budget": {"epsilon": epsilon, "delta": delta,
                       **({} if neighbouring is None else {"neighbouring": neighbouring})},
            "pipeline": {"recipe": recipe, "stages": {k: dict(v) for k, v in stages.items()},
                         "records": records},
            "evaluation": {"enabled": False},
            "seed": seed,
        }
        self._job_object: SynthesisJob | None = None
        self._fitted: Fitted | None = None
        self._model: ReleasedModel | None = None
        self.progress = progress
        self.job: Job | None = None if schema is None else self._job(IN_MEMORY)

    def _job(self, path: str | Path) -> Job:
        from synthpriv.config import Job, validate_job

        config = {**self._config, "data": {**self._config["data"], "path": str(path)}}
        return Job(validate_job(config, "Synthesizer"), Path.cwd(), "Synthesizer")

    @property
    def schema(self) -> Schema | None:
        """The schema as given; after ``fit``, the resolved one (the DP domain step's kinds,
        bounds and categories where the given schema left them out): the model's, as in a
        release. None before ``fit`` when no schema was given."""
        return None if self.job is None else self.job.schema

    def plan(self) -> Plan:
        """The plan: each stage's budget share, zCDP ρ and calibrated noise. Reads no data."""
        from synthpriv.job import SynthesisJob

        if self.job is None:
            raise ConfigError("no schema yet: the plan needs the columns. Give schema= (a path, "
                              "a mapping or infer_schema(df, safe=True)[0]), or call fit first.")
        return SynthesisJob(self.job).plan

    def _draft_schema(self, data: pd.DataFrame | str | Path) -> None:
        """No schema given: draft it from ``data``'s column names only (every column kind auto;
        the same rule as ``synthpriv schema infer``, its default); nothing else of the data is read."""
        from synthpriv.schema_infer import infer_schema

        draft, _ = infer_schema(data if type(data).__name__ == "DataFrame" else Path(data),
                                safe=True)
        self._config["data"]["schema"] = draft

    def fit(self, data: pd.DataFrame | str | Path) -> Synthesizer:
        """Fit on ``data`` (a DataFrame with the schema's columns, or a CSV/Parquet path),
        spending the whole budget; returns ``self``. The plan is made, and its refusals raised,
        before the data is read."""
        import pandas as pd

        from synthpriv.job import SynthesisJob
        from synthpriv.released_model import ReleasedModel
        from synthpriv.table import check_frame

        if self._config["data"]["schema"] is None:
            self._draft_schema(data)
        if isinstance(data, pd.DataFrame):
            self.job = self._job(IN_MEMORY)
            runner = SynthesisJob(self.job)
            runner.planned  # noqa: B018 - plan-time refusals before the data is read
            runner.table = check_frame(data, self.job.schema)
        else:
            self.job = self._job(Path(data).resolve())
            self.job.check_paths()
            runner = SynthesisJob(self.job)
        from synthpriv.progress import StepProgress

        shown = StepProgress(runner.plan, self.progress)
        runner.hooks = shown.hooks()
        try:
            fitted = runner.fit(evaluate=False)
        finally:
            shown.close()
        fitted.synthetic.to_frame()  # drawn once and kept: ``synthetic`` and ``release`` read it
        self._job_object, self._fitted = runner, fitted
        # From here on the job is the resolved one: its schema holds the DP domain step's bounds
        # and categories where the given schema left them out (as a loaded release's does).
        declared = self.job.schema
        self.job = fitted.synthesis.job
        self._model = ReleasedModel.from_state(fitted.synthesis.state, self.job.schema,
                                               list(fitted.synthetic.columns))
        self._warn(fitted.warnings + fitted.run_warnings, declared)
        return self

    def _warn(self, messages: list[str], declared: Schema) -> None:
        """The plan-time warnings, and a column the domain step left all missing, as Python
        warnings (the command line prints them on stderr)."""
        import warnings

        from synthpriv.domain_stage import domain_lines

        found = [line for line in domain_lines(declared, self.job.schema)
                 if line.startswith("WARNING")]
        for message in [*messages, *found]:
            warnings.warn(message, SynthprivWarning, stacklevel=3)

    def _require_model(self) -> ReleasedModel:
        if self._model is None:
            raise ConfigError("this Synthesizer is not fitted: call fit(data) first, or "
                              "Synthesizer.load(release_folder).")
        return self._model

    @property
    def synthetic(self) -> pd.DataFrame:
        """The rows the fit drew (what ``release`` writes)."""
        if self._fitted is not None:
            return self._fitted.synthetic.to_frame()
        if self._model is not None and self._model.folder is not None:
            from synthpriv.chunks import read_input
            from synthpriv.release import SYNTHETIC

            return read_input(self._model.folder / SYNTHETIC, self.schema)
        raise ConfigError("no synthetic rows: call fit(data) first.")

    @property
    def epsilon(self) -> float:
        """The ε the ledger reports for what was spent (at the budget's δ)."""
        if self._fitted is not None:
            return self._fitted.synthesis.ledger.epsilon(self.job.config.budget.delta)
        return float(self._require_model().manifest["ledger"]["epsilon"])

    def sample(self, n: int, *, where: Mapping[str, str] | None = None,
               seed: int | None = None) -> pd.DataFrame:
        """``n`` rows drawn from the fitted DP model, each satisfying ``where`` (column → value,
        categorical columns; marginal recipes). Post-processing: no further privacy cost.
        ``seed`` fixes the draw only (the noise is already in the model)."""
        from synthpriv.privacy.randomness import RandomSource

        source = RandomSource.secure() if seed is None else RandomSource.seeded(seed)
        rng = source.numpy_generator()
        return self._require_model().sample(n, rng, dict(where or {})).to_frame()

    def query(self, *columns: str) -> pd.DataFrame:
        """The marginal over ``columns`` from the model with a standard error per cell (see
        ``ReleasedModel.query``). Marginal recipes, and the hybrid recipe on the marginals its
        rows follow its marginals model on; no further privacy cost. Where no measurement covers
        the marginal its ``std_error`` is NaN and a warning says why."""
        import warnings

        answer = self._require_model().query(list(columns))
        if answer["std_error"].isna().any():
            why = (f"no measurement covers ({', '.join(columns)}): the count is the model's "
                   "estimate from the marginals it measured, and its error (noise and model "
                   "error alike) has no closed form, so std_error is NaN. Query a marginal the "
                   "model measured (the manifest's ledger lists them) for one with errors.")
            answer.attrs["std_error"] = why
            warnings.warn(why, SynthprivWarning, stacklevel=2)
        return answer

    def release(self, out_dir: str | Path, *, force: bool = False) -> Path:
        """Write the fit's release to ``out_dir`` atomically (synthetic.csv, model.json,
        model.npz, manifest.json), as ``synthpriv run`` does; returns the folder."""
        from synthpriv.release import check_target

        if self._fitted is None or self._job_object is None:
            raise ConfigError("nothing to release: call fit(data) first.")
        out = Path(out_dir).resolve()
        check_target(out, force)
        return self._job_object.release(self._fitted, out, force=force).out_dir

    save = release  # the saved model is the release: Synthesizer.load reads it back

    @classmethod
    def load(cls, folder: str | Path) -> Synthesizer:
        """A release's model (checked against its manifest's hashes): ``sample`` and ``query``
        work at no privacy cost; the budget is the release's, already spent."""
        from synthpriv.model_store import load_model

        released = load_model(folder)
        config = released.manifest["config"]
        budget = config["budget"]
        synth = cls(released.schema, budget["epsilon"], budget["delta"],
                    config["pipeline"]["recipe"], neighbouring=budget["neighbouring"],
                    name=config["name"])
        synth._model = released
        return synth

    def evaluate(
        self, real: pd.DataFrame | str | Path, holdout: pd.DataFrame | str | Path | None = None,
        *, target: str | None = None, attacks: bool = True,
    ) -> EvaluationResult:
        """Compare the fitted rows with ``real`` (the rows fitted) and ``holdout`` (real rows not
        fitted: TSTR and membership attacks need it). Reads the real data: the result is NOT
        differentially private and must stay with the data holder."""
        from synthpriv.config import EvaluationConfig
        from synthpriv.evaluation.evaluate import Claim, evaluate_tables
        from synthpriv.sweep import headline_figures

        settings = EvaluationConfig(target=target, attacks=attacks, controls=[],
                                    anonymeter=False, quality_report=False)
        budget = self.job.config.budget
        report = evaluate_tables(
            self._table(real), self.synthetic, numeric_columns=self.schema.numeric_names,
            settings=settings, holdout=None if holdout is None else self._table(holdout),
            claim=Claim(self.epsilon, budget.delta, budget.neighbouring), progress=False,
            name=self.job.config.name,
        )
        figures = headline_figures(report)
        return EvaluationResult(
            tvd={k: figures[f"tvd_{k}way"] for k in (1, 2, 3) if figures.get(f"tvd_{k}way")
                 is not None},
            association_diff=figures.get("association_diff"), tstr_auc=figures.get("tstr_auc"),
            trtr_auc=figures.get("trtr_auc"), tstr_r2=figures.get("tstr_r2"),
            attack_auc=figures.get("attack_auc_worst"),
            epsilon_lower_bound=figures.get("eps_lower_bound"), report=report,
        )

    def _table(self, data: pd.DataFrame | str | Path) -> pd.DataFrame:
        import pandas as pd

        from synthpriv.chunks import read_input
        from synthpriv.table import check_frame

        given = self._job(IN_MEMORY).schema  # the rows' own schema: the fit checked them on it
        if isinstance(data, pd.DataFrame):
            return check_frame(data, given)
        return read_input(Path(data), given)
