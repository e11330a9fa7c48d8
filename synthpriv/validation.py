"""Turn pydantic validation errors into messages that name the key and suggest the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from pydantic import BaseModel, ValidationError


def known_keys(model: type[BaseModel]) -> set[str]:
    """Every field name of ``model`` and of the models nested in it."""
    keys: set[str] = set()
    pending: list[type] = [model]
    seen: set[type] = set()
    while pending:
        current = pending.pop()
        if current in seen or not isinstance(current, type) or not issubclass(current, BaseModel):
            continue
        seen.add(current)
        for name, info in current.model_fields.items():
            keys.add(name)
            pending.extend(_model_types(info.annotation))
    return keys


def _model_types(annotation: object) -> Iterable[type]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        yield from _model_types(arg)
    metadata = getattr(annotation, "__metadata__", None)
    if metadata is not None:
        yield from _model_types(getattr(annotation, "__origin__", None))


def fields_at(model: type[BaseModel], location: tuple) -> list[str]:
    """Field names of the model found by following ``location`` from ``model`` (for suggestions);
    every known key when the path leads out of typed models."""
    current: type[BaseModel] = model
    for part in location:
        if isinstance(part, int):
            continue
        info = current.model_fields.get(str(part))
        if info is None:
            nested = [m for m in _model_types(current) if str(part) in m.model_fields]
            if not nested:
                return sorted(known_keys(model))
            info = nested[0].model_fields[str(part)]
        models = [m for m in _model_types(info.annotation)]
        if not models:
            return sorted(known_keys(model))
        current = next((m for m in models if str(part) in m.model_fields), models[0])
    return sorted(current.model_fields)


def describe_validation_error(error: ValidationError, model: type[BaseModel], source: str) -> str:
    """One line per problem: where (dotted key path), what is wrong, and a suggested fix."""
    lines = [f"{source}: invalid {model.__name__}:"]
    for problem in error.errors():
        location = ".".join(str(part) for part in problem["loc"]) or "(top level)"
        if problem["type"] == "extra_forbidden":
            key = str(problem["loc"][-1])
            vocabulary = fields_at(model, tuple(problem["loc"][:-1]))
            guess = difflib.get_close_matches(key, vocabulary, n=1, cutoff=0.6)
            hint = f" Did you mean '{guess[0]}'?" if guess else " Remove it."
            lines.append(f"  - unknown key '{location}'.{hint}")
        elif problem["type"] == "union_tag_invalid":
            lines.append(_bad_tag(location, problem.get("ctx", {}), problem.get("input")))
        elif problem["type"] == "missing":
            lines.append(f"  - missing required key '{location}'. Add it.")
        else:
            found = problem.get("input")
            shown = repr(found) if not isinstance(found, dict | list) else type(found).__name__
            lines.append(f"  - '{location}': {problem['msg']} (found {shown}).")
    return "\n".join(lines)


def _bad_tag(location: str, context: dict, found: object) -> str:
    """A value of a tagged choice (a column's ``kind``) that is none of the choices; the
    entry's ``name``, when it has one, says which."""
    key = str(context.get("discriminator", "kind")).strip("'")
    tag = str(context.get("tag", ""))
    expected = [t.strip(" '") for t in str(context.get("expected_tags", "")).split(",") if t.strip()]
    guess = difflib.get_close_matches(tag, expected, n=1, cutoff=0.6)
    hint = f" Did you mean '{guess[0]}'?" if guess else ""
    named = f" (column '{found['name']}')" if isinstance(found, dict) and "name" in found else ""
    return (f"  - '{location}.{key}'{named}: '{tag}' is not a {key}; expected one of "
            f"{', '.join(expected)}.{hint}")
