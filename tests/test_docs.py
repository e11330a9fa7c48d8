"""The docs: the README stays a short front door, every relative link and #anchor in README.md and
docs/*.md resolves, and every `synthpriv` subcommand in a ```bash block exists in the CLI parser."""
from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from synthpriv.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """GitHub-style heading anchors of a markdown page (fenced code skipped)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    out = set()
    for heading in re.findall(r"^#+ +(.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def test_readme_is_at_most_250_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines, expected ≤ 250: move sections to docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_and_anchors_resolve(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no file {dest})")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.name})")
    assert not broken, f"{page.name}: broken links {broken}; fix the path or the heading"


def _subcommands() -> set[tuple[str, ...]]:
    found = set()
    for page in PAGES:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for line in block.splitlines():
                words = line.split("#")[0].split()
                if len(words) >= 2 and words[0] == "synthpriv" and not words[1].startswith("-"):
                    sub = [words[1]]
                    if len(words) >= 3 and words[1] == "schema":
                        sub.append(words[2])
                    found.add(tuple(sub))
    return found


def test_docs_name_some_subcommands() -> None:
    assert {("run",), ("plan",)} <= _subcommands()


@pytest.mark.parametrize("sub", sorted(_subcommands()), ids=" ".join)
def test_bash_block_subcommands_exist(sub: tuple[str, ...], capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main([*sub, "--help"])
    assert stop.value.code == 0, f"'synthpriv {' '.join(sub)} --help' exited {stop.value.code}: " \
        "the docs name a subcommand the CLI does not have"


def test_the_index_lists_every_page() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    linked = set(LINK.findall(index))
    missing = [p.name for p in sorted((ROOT / "docs").glob("*.md"))
               if p.name != "index.md" and p.name not in linked]
    assert not missing, f"docs/index.md does not link {missing}: add a line for each page"


def _keys(model: type) -> set[str]:
    """The keys a user may write in ``model`` (aliases as written), and in its nested models."""
    from pydantic import BaseModel

    keys = set()
    for name, field in model.model_fields.items():
        keys.add(field.alias or name)
        nested = field.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            keys |= _keys(nested)
    return keys


def test_every_config_and_schema_key_is_documented() -> None:
    """Each key of the job config and of a schema column (every kind's model, read from the code)
    appears in README.md or docs/*.md as a word: a key added without a line of docs fails."""
    from pydantic import BaseModel

    from synthpriv import schema
    from synthpriv.config import JobConfig

    columns = [model for model in vars(schema).values() if isinstance(model, type)
               and issubclass(model, BaseModel) and model.__module__ == schema.__name__]
    keys = _keys(JobConfig).union(*(_keys(model) for model in columns))
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    missing = sorted(k for k in keys if not re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", text))
    assert not missing, f"keys not in README.md or docs/*.md: {missing}; document each in docs/"
    kinds = {kind for model in columns if "kind" in model.model_fields
             for kind in get_args(model.model_fields["kind"].annotation)} - {"ignored"}
    assert len(kinds) >= 8  # categorical, integer, continuous, date, datetime, id, text, auto
    missing = sorted(kind for kind in kinds if f"kind: {kind}" not in text and f"`{kind}`" not in text)
    assert not missing, f"kinds never written 'kind: <kind>' or `<kind>` in the docs: {missing}"


def _options(command, path: tuple[str, ...] = ()):
    """(subcommand path, long option) for every option of the CLI parser, subcommands included."""
    import argparse

    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*path, name))
        else:
            yield from ((path, o) for o in action.option_strings if o.startswith("--"))


def test_every_command_line_option_is_documented() -> None:
    from synthpriv.cli import parser

    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    missing = sorted({f"synthpriv {' '.join(path)} {option}" for path, option in _options(parser())
                      if option != "--help" and not re.search(rf"{re.escape(option)}(?![\w-])", text)})
    assert not missing, f"options not in README.md or docs/*.md: {missing}; document each in docs/"
