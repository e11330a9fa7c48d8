"""Pipeline recipes: named lists of stages with their budget shares and default options (data).

A config names a recipe by name (looked up in the project's ``pipelines/`` folder) or by a path to
a YAML file (relative to the config).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from synthpriv.config import read_yaml
from synthpriv.errors import ConfigError
from synthpriv.validation import describe_validation_error

PROJECT_PIPELINES = Path(__file__).resolve().parents[1] / "pipelines"


class RecipeStage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stage: str
    share: float = Field(default=0.0, ge=0.0, le=1.0)
    options: dict[str, Any] = Field(default_factory=dict)


class Recipe(BaseModel):
    """Stages in the order they run; the shares of the budgeted stages sum to 1."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    stages: list[RecipeStage] = Field(min_length=1)

    @model_validator(mode="after")
    def _shares(self) -> Recipe:
        total = sum(s.share for s in self.stages)
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            raise ValueError(f"stage shares must sum to 1, they sum to {total:g}")
        names = [s.stage for s in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"a stage appears twice in {names}; list each once")
        return self


def available_recipes(search: list[Path]) -> list[str]:
    return sorted({p.stem for folder in search if folder.is_dir() for p in folder.glob("*.yaml")})


def load_recipe(name: str, config_dir: Path) -> Recipe:
    """The recipe ``name``: a YAML path (relative to the config) or a name in pipelines/."""
    search = [config_dir.parent / "pipelines", Path.cwd() / "pipelines", PROJECT_PIPELINES]
    if name.endswith((".yaml", ".yml")):
        candidates = [Path(name) if Path(name).is_absolute() else config_dir / name]
    else:
        candidates = [folder / f"{name}.yaml" for folder in search]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise ConfigError(
            f"pipeline.recipe '{name}' not found (looked in {[str(c) for c in candidates]}). "
            f"Available recipes: {available_recipes(search)}."
        )
    raw = read_yaml(path, "recipe")
    try:
        return Recipe.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(describe_validation_error(error, Recipe, str(path))) from None
