"""The docs: the README stays a short front door, every relative link and #anchor in README.md and
docs/*.md resolves, and every `synthpriv` subcommand in a ```bash block exists in the CLI parser."""
from __future__ import annotations

import re
from pathlib import Path

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
