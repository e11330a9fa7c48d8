"""Errors a user can act on. Each message says what was expected, what was found, and the fix.

The command line prints these without a traceback and exits non-zero; anything else is a bug.
"""


class SynthprivError(Exception):
    """Base class for errors caused by input (config, schema, data, budget, output)."""


class ConfigError(SynthprivError):
    """A job config or recipe is malformed."""


class SchemaError(SynthprivError):
    """A schema is malformed."""


class DataError(SynthprivError):
    """The input table does not match its schema."""


class BudgetError(SynthprivError):
    """The privacy budget cannot pay for the plan."""


class ReleaseError(SynthprivError):
    """The release cannot be written where it was asked for."""


class SynthprivWarning(UserWarning):
    """A plan-time or domain-step warning given through Python's ``warnings`` (the API): what the
    command line prints on stderr, e.g. "mostly noise", a draft schema, a column left all missing."""
