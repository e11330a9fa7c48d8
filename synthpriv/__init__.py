"""synthpriv: differentially private synthetic tables.

The Python API (``Synthesizer``, ``infer_schema``, ``Schema``, ``load_schema``, ``SynthprivError``,
``SynthprivWarning``) is imported lazily: ``import
synthpriv`` stays fast and the command line starts at once; pandas, numpy and the stages load
when a name below is first used. See README "Python API".
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synthpriv.api import EvaluationResult, Synthesizer
    from synthpriv.errors import SynthprivError, SynthprivWarning
    from synthpriv.schema import Schema, load_schema
    from synthpriv.schema_infer import infer_schema

__all__ = ["EvaluationResult", "Schema", "SynthprivError", "SynthprivWarning", "Synthesizer",
           "infer_schema", "load_schema"]
_EXPORTS = {
    "infer_schema": "synthpriv.schema_infer",
    "SynthprivWarning": "synthpriv.errors",
    "Synthesizer": "synthpriv.api",
    "EvaluationResult": "synthpriv.api",
    "Schema": "synthpriv.schema",
    "load_schema": "synthpriv.schema",
    "SynthprivError": "synthpriv.errors",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'synthpriv' has no attribute '{name}'")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
