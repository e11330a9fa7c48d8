"""Job configs: typed, validated, with errors that name the key and the fix.

A job names its table, its schema (public domain of every column), its budget, its pipeline
recipe (``aim`` unless ``pipeline.recipe`` says otherwise) and stage options, evaluation and output.

Paths, one rule: a relative path written IN the config (data.path, data.schema, data.holdout,
output.dir, a recipe file) is relative to the config file's folder, so a config means the same
files from wherever it is run; a path given ON the command line (--out, evaluate's files) is
relative to the current folder, as every shell command's is. With neither output.dir nor --out
the release goes to ``out/<name>`` in the current folder. Path errors show the path as written
and as resolved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from synthpriv.errors import ConfigError, DataError, SchemaError, SynthprivError
from synthpriv.schema import Schema, load_schema, parse_schema, safe_load_yaml, yaml_problem
from synthpriv.table import delimited, parse_delimiter
from synthpriv.validation import describe_validation_error


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


DEFAULT_ROWS_PER_PERSON = 3  # a public constant, not tuned on any table: noise σ scales by it


class DataConfig(_Strict):
    """The sensitive table, its public schema, and optional public facts about it."""

    path: Path
    table_schema: Path | dict[str, Any] = Field(alias="schema")
    holdout: Path | None = None
    delimiter: str = Field(
        default=",", description="the one character separating the fields of data.path and "
        "data.holdout (CSV): ',' (default), ';', '|' or a tab ('tab' or \"\\t\"). Public: the "
        "file's format, read from the config, never from the rows",
    )
    public_records: int | None = Field(default=None, ge=1)
    engine: Literal["local", "dask"] = Field(
        default="local",
        description="where exact marginal counts are computed: 'local' streams the file on this "
        "machine; 'dask' counts on a Dask cluster (only counts come back to this machine)",
    )
    chunk_rows: int | None = Field(
        default=None, ge=1,
        description="rows parsed and encoded at a time; none: 1.5 million cells' worth",
    )
    scheduler: str | None = Field(
        default=None, description="dask only: address of a running scheduler (tcp://host:8786); "
        "none starts a local cluster of 'workers' processes",
    )
    workers: int = Field(default=2, ge=1, description="dask only: local cluster's worker processes")
    person: str | None = Field(
        default=None, description="the column that identifies a person: the guarantee is then per "
        "person (neighbouring tables differ by all rows of one person, up to rows_per_person), "
        "each person keeps at most rows_per_person rows chosen at random, and the column is never "
        "modelled (released as fresh ids if its kind is id, else empty)",
    )
    rows_per_person: int | None = Field(
        default=None, ge=1, description="with data.person: the most rows one person contributes "
        f"(every mechanism's sensitivity is multiplied by it); none: {DEFAULT_ROWS_PER_PERSON}, "
        "a public constant (synthpriv.config.DEFAULT_ROWS_PER_PERSON)",
    )
    public_persons: int | None = Field(
        default=None, ge=1, description="with data.person: the number of persons, if public; with "
        "public_records the plan then says how much of the table bounding to rows_per_person "
        "drops at least",
    )

    @field_validator("delimiter")
    @classmethod
    def _one_character(cls, delimiter: str) -> str:
        return parse_delimiter(delimiter, "data.delimiter")

    @model_validator(mode="after")
    def _person_keys(self) -> DataConfig:
        if self.person is None and (self.rows_per_person is not None
                                    or self.public_persons is not None):
            raise ValueError(
                "data.rows_per_person and data.public_persons need data.person (the column that "
                "identifies a person); set data.person, or remove them")
        if self.person is not None and self.engine == "dask":
            raise ValueError(
                "data.person needs all of a person's rows on this machine to bound them; the "
                "'dask' engine keeps rows on its workers. Use data.engine: local with data.person")
        return self

    @property
    def contribution_bound(self) -> int:
        """Rows one person may contribute: 1 without data.person (the guarantee is per row),
        else data.rows_per_person or the public default. Public: read from the config only."""
        if self.person is None:
            return 1
        return self.rows_per_person or DEFAULT_ROWS_PER_PERSON


DEFAULT_DELTA = 1e-6


class BudgetConfig(_Strict):
    """The total (ε, δ) of the job under the declared neighbouring relation."""

    epsilon: float = Field(gt=0, allow_inf_nan=False)
    delta: float = Field(
        default=DEFAULT_DELTA, gt=0, lt=1, description="δ; default 1e-6 (public: depends on no "
        "data; the plan says when it is the default)")
    neighbouring: Literal["add_remove", "replace_one"] = "add_remove"
    allow_large_delta: bool = False
    domain_share: float | None = Field(
        default=None, ge=0, lt=1, description="share of the budget (zCDP ρ) for the domain step: "
        "DP bounds and DP categories of the columns whose schema gives none (unused otherwise); "
        "none: the share that gives its counts the noise of MST's 1-way marginals "
        "(synthpriv.privacy.domain_budget.domain_share)",
    )
    domain_delta_share: float = Field(
        default=0.1, ge=0, lt=1, description="share of δ for the thresholds of DP category "
        "discovery (columns without categories; unused otherwise)",
    )


DEFAULT_RECIPE = "aim"


class PipelineConfig(_Strict):
    """Which recipe runs (``aim`` when not given: the README's default), with per-stage option
    overrides."""

    recipe: str = DEFAULT_RECIPE
    stages: dict[str, dict[str, Any]] = Field(default_factory=dict)
    records: int | None = Field(default=None, ge=1)


class ShadowAttackConfig(_Strict):
    """The shadow-model attack (opt-in): its cost is ``shadow_tables`` runs of the pipeline.

    Each shadow table holds ``records`` rows drawn from the real training table minus the
    targets, and each target is put in (or, under replace_one, swapped in) with probability ½;
    half the tables train the attack's classifiers, the other half (fresh) measure them.
    """

    enabled: bool = False
    shadow_tables: int = Field(default=200, ge=8)
    vulnerable_targets: int = Field(default=3, ge=0)
    random_targets: int = Field(default=2, ge=0)
    records: int = Field(default=1000, ge=10)
    workers: int = Field(default=1, ge=1)
    identity_control: bool = True


class MarginalAttackConfig(_Strict):
    """The attack built for marginal recipes (on by default; see
    ``synthpriv.evaluation.marginal_attack``): its cost is ``shadow_tables`` runs of the pipeline
    on ``records``-row tables drawn from the training table minus the ``targets`` most exposed
    rows; it counts the synthetic rows in each target's cells of every 1- … ``max_order``-way
    marginal. Half the tables fit the attack, the other half (fresh) measure it.
    """

    enabled: bool = True
    shadow_tables: int = Field(default=8, ge=8)
    records: int = Field(default=300, ge=10)
    targets: int = Field(default=10, ge=1)
    max_order: int = Field(default=2, ge=1, le=3)
    workers: int = Field(default=1, ge=1)
    identity_control: bool = True


Control = Literal["identity", "gaussian_copula", "ctgan", "cart"]


class EvaluationConfig(_Strict):
    """What to evaluate after the release (reads the real data: not part of the DP release).

    Attacks use the training rows as members and the holdout as non-members; ``holdout_fraction``
    holds back that share of the input (before fitting) when the config names no holdout.
    ``controls`` are generators the same attacks run against (identity = the training rows;
    gaussian_copula = SDV's non-DP copula; cart = sequential CART, synthpop's method; ctgan =
    SDV's CTGAN, slow: opt-in).
    """

    enabled: bool = True
    target: str | None = None
    attacks: bool = True
    quality_report: bool = True
    attack_targets: int = Field(default=1000, ge=2)
    bootstrap: int = Field(default=200, ge=0)
    controls: list[Control] = Field(default_factory=lambda: ["identity", "gaussian_copula"])
    anonymeter: bool = True
    anonymeter_attacks: int = Field(default=200, ge=10)
    holdout_fraction: float | None = Field(default=None, gt=0, lt=1)
    shadow: ShadowAttackConfig = Field(default_factory=ShadowAttackConfig)
    marginal_attack: MarginalAttackConfig = Field(default_factory=MarginalAttackConfig)
    attack_seed: int = Field(default=0, ge=0)  # target draws, bootstrap, shadow tables (not noise)


class OutputConfig(_Strict):
    dir: Path | None = None


class JobConfig(_Strict):
    """One synthesis job."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    data: DataConfig
    budget: BudgetConfig
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    seed: int | None = None

    @field_validator("seed")
    @classmethod
    def _seed_non_negative(cls, seed: int | None) -> int | None:
        if seed is not None and seed < 0:
            raise ValueError("seed must be a non-negative integer (or omit it for secure noise)")
        return seed


class Job:
    """A validated job config with its paths resolved and its schema loaded."""

    def __init__(self, config: JobConfig, base_dir: Path, source: str) -> None:
        self.config = config
        self.base_dir = base_dir
        self.source = source
        raw_schema = config.data.table_schema
        if isinstance(raw_schema, Path):
            self.check_path(raw_schema, "data.schema", "schema file", SchemaError)
            self.schema: Schema = load_schema(self.resolve(raw_schema))
        else:
            self.schema = parse_schema(raw_schema, f"{source}: data.schema")
        if config.data.person is not None:  # its keys are read to bound persons, never modelled
            from synthpriv.persons import person_schema

            self.schema = person_schema(self.schema, config.data.person, source)
        target = config.evaluation.target
        if target is not None and target not in self.schema.names:
            raise ConfigError(
                f"{source}: evaluation.target '{target}' is not a column of the schema "
                f"{self.schema.names}. Name one of them."
            )

    def resolve(self, path: Path) -> Path:
        """``path`` as written in the config, made absolute: relative to the config's folder."""
        return path if path.is_absolute() else (self.base_dir / path).resolve()

    def describe_path(self, written: Path, key: str) -> str:
        """``key``'s path as written and as resolved, for messages: the two differ when the
        config is not in the current folder, which is where a wrong path usually comes from."""
        resolved = self.resolve(written)
        if written.is_absolute():
            return f"{key} '{written}'"
        return (f"{key} '{written}' (as written in {self.source}; relative to the config's "
                f"folder, it resolves to {resolved})")

    def check_path(
        self, written: Path, key: str, what: str, error: type[SynthprivError] = ConfigError
    ) -> None:
        """Raise ``error`` naming ``key``, its path as written and as resolved, unless that path
        is an existing file."""
        resolved = self.resolve(written)
        if resolved.is_file():
            return
        found = "is a folder, not a file" if resolved.is_dir() else "does not exist"
        raise error(
            f"{what} not found: {self.describe_path(written, key)} {found}. Fix '{key}': paths in "
            "a config are relative to the config file's folder, not to the current folder."
        )

    def check_paths(self) -> None:
        """Check that the data files the config names exist (before a run reads them), with
        errors that show each path as written and as resolved. ``plan`` reads no data and does
        not call this."""
        self.check_path(self.config.data.path, "data.path", "data file", DataError)
        if self.config.data.holdout is not None:
            self.check_path(self.config.data.holdout, "data.holdout", "holdout file", DataError)

    @property
    def data_path(self) -> Path:
        """The input, carrying data.delimiter for every reader (``table.DelimitedPath``)."""
        return delimited(self.resolve(self.config.data.path), self.config.data.delimiter)

    @property
    def holdout_path(self) -> Path | None:
        """The holdout, read with the input's data.delimiter."""
        holdout = self.config.data.holdout
        return None if holdout is None else delimited(self.resolve(holdout),
                                                      self.config.data.delimiter)

    def output_dir(self, override: Path | None = None) -> Path:
        """``--out`` if given (relative to the current folder, as any command-line path), else
        ``output.dir`` (relative to the config's folder, as any path in the config), else
        ``out/<name>`` in the current folder."""
        if override is not None:
            return override.resolve()
        if self.config.output.dir is not None:
            return self.resolve(self.config.output.dir)
        return (Path.cwd() / "out" / self.config.name).resolve()

    def describe_output(self, override: Path | None = None) -> str:
        """Where the release folder came from, as written and as resolved (for release errors)."""
        resolved = self.output_dir(override)
        if override is not None:
            return f"--out '{override}' (relative to the current folder: {resolved})"
        if self.config.output.dir is not None:
            return self.describe_path(self.config.output.dir, "output.dir")
        return (f"the default out/{self.config.name} (no output.dir or --out; relative to the "
                f"current folder: {resolved})")

    def with_budget(self, epsilon: float | None, delta: float | None) -> Job:
        """The same job with the budget overridden (the command line's --epsilon/--delta)."""
        budget = self.config.budget.model_dump()
        budget.update({k: v for k, v in (("epsilon", epsilon), ("delta", delta)) if v is not None})
        data = self.config.model_dump(by_alias=True)
        data["budget"] = budget
        return Job(validate_job(data, self.source), self.base_dir, self.source)


def validate_job(raw: object, source: str) -> JobConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: a job config is a YAML mapping, found {type(raw).__name__}.")
    try:
        return JobConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(describe_validation_error(error, JobConfig, source)) from None


def read_yaml(path: Path, what: str) -> object:
    try:
        return safe_load_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise ConfigError(f"{what} is a folder, not a YAML file: {path}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise ConfigError(yaml_problem(path, error)) from None


def load_job(path: str | Path) -> Job:
    """Read, validate and resolve the job config at ``path``."""
    path = Path(path)
    raw = read_yaml(path, "config file")
    return Job(validate_job(raw, str(path)), path.resolve().parent, str(path))
