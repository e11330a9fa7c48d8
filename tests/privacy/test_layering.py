"""The privacy layer stands alone: nothing under synthpriv/privacy/ imports, directly or through
another synthpriv module, a stage, the pipeline, the job object or the evaluation (DESIGN.md,
"lower never imports higher"). Imports inside functions count too."""

from __future__ import annotations

import ast
from pathlib import Path

import synthpriv

PACKAGE = Path(synthpriv.__file__).parent
ALLOWED = ("synthpriv.privacy", "synthpriv.errors")


def module_path(name: str) -> Path | None:
    parts = name.split(".")[1:]
    for candidate in (PACKAGE.joinpath(*parts).with_suffix(".py"),
                      PACKAGE.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return candidate
    return None


def synthpriv_imports(path: Path) -> set[str]:
    """Every synthpriv module ``path`` imports, anywhere in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("synthpriv"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("synthpriv"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names
                         if module_path(f"{node.module}.{a.name}") is not None)
    return found


def test_privacy_imports_no_stage_pipeline_or_evaluation_module() -> None:
    start = [f"synthpriv.privacy.{p.stem}" for p in (PACKAGE / "privacy").glob("*.py")]
    seen, queue, edges = set(start), list(start), {}
    while queue:
        name = queue.pop()
        path = module_path(name)
        if path is None:
            continue
        for imported in synthpriv_imports(path):
            if imported not in seen:
                seen.add(imported)
                edges[imported] = name
                queue.append(imported)
    outside = sorted(m for m in seen if not m.startswith(ALLOWED) and m != "synthpriv")
    assert not outside, "privacy imports " + ", ".join(f"{m} (from {edges[m]})" for m in outside)


def test_the_walk_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The walker is not blind: a file importing the stage module is caught."""
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from synthpriv.stage import Stage\n")
    assert "synthpriv.stage" in synthpriv_imports(probe)
