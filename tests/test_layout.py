"""The code's layout keeps its rules (docs/architecture.md): imports run one way between the layers
and between the folders of `activities/`, no module imports itself back through others, no module
passes 300 lines, no folder of `activities/` or `workflows/steps/` holds more than 15 modules at its
top level, and `activities/` is folders by concept, each saying what it is for.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("api", "workflows", "activities", "isolator", "workers")
# What each layer may import of the others (workers/ wires everything together).
MAY_IMPORT = {
    "api": {"api", "workflows", "activities", "isolator"},
    "workflows": {"workflows", "activities", "isolator"},
    "activities": {"activities", "isolator"},
    "isolator": {"isolator"},
    "workers": set(PRODUCT),
}
# activities/ has no top-level module but its __init__.py and the database pool every folder shares.
TOP_LEVEL_ACTIVITIES = {"__init__.py", "database.py"}


def modules() -> dict[str, Path]:
    found = {}
    for layer in PRODUCT:
        for path in (ROOT / layer).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports_of(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """The product modules `path` imports (at any depth of its code, lazy imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{name}: imports are absolute (from activities.git.runner import ...)"
            base = node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)
    return {module for module in found if module in known and module != name}


@functools.cache  # every test reads the same source: parse it once
def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(path, name, known) for name, path in known.items()}


def test_imports_never_run_back_up_a_layer() -> None:
    upward = sorted(
        f"{name} imports {imported}"
        for name, imported_modules in graph().items()
        for imported in imported_modules
        if imported.split(".")[0] not in MAY_IMPORT[name.split(".")[0]]
    )
    assert upward == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for following in sorted(edges.get(node, ())):
            if following not in index:
                visit(following)
                low[node] = min(low[node], low[following])
            elif following in on_stack:
                low[node] = min(low[node], index[following])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def test_no_module_imports_itself_back() -> None:
    # A package's __init__ that imports its own modules is no circle of code: leave those edges out.
    edges = {name: {imported for imported in imported_modules if not name.startswith(imported + ".")}
             for name, imported_modules in graph().items()}
    assert cycles(edges) == []


def test_the_circle_check_can_fail() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The folders of activities/ from the bottom up, as docs/architecture.md lists them.
FOLDER_ORDER = ["database", "git", "sandbox", "chat", "providers", "environments", "warm", "hosts", "codebases", "runs", "results", "automations", "doctor"]


def test_the_folders_of_activities_import_only_those_below_them() -> None:
    """A folder imports only folders before it in FOLDER_ORDER, so there is no circle between them."""
    assert sorted(FOLDER_ORDER) == sorted(path.stem for path in (ROOT / "activities").iterdir()
                                          if path.name not in {"__init__.py", "__pycache__"})
    upward = set()
    for name, imported_modules in graph().items():
        parts = name.split(".")
        if parts[0] != "activities" or len(parts) < 2:
            continue
        for imported in imported_modules:
            target = imported.split(".")
            if target[0] == "activities" and len(target) > 1 and \
                    FOLDER_ORDER.index(target[1]) > FOLDER_ORDER.index(parts[1]):
                upward.add(f"{name} imports {imported}")
    assert sorted(upward) == []


def test_no_module_is_over_300_lines() -> None:
    long = sorted(f"{path.relative_to(ROOT)}: {lines} lines" for path in modules().values()
                  if (lines := len(path.read_text().splitlines())) > 300)
    assert long == []


def test_no_folder_of_activities_or_the_steps_holds_more_than_15_modules() -> None:
    crowded = []
    for top in (ROOT / "activities", ROOT / "workflows" / "steps"):
        for folder in [top, *[path for path in top.rglob("*") if path.is_dir()]]:
            count = len([path for path in folder.glob("*.py") if path.name != "__init__.py"])
            if count > 15:
                crowded.append(f"{folder.relative_to(ROOT)}: {count}")
    assert crowded == []


def test_activities_is_folders_by_concept_each_saying_what_it_is_for() -> None:
    activities = ROOT / "activities"
    assert sorted(path.name for path in activities.glob("*.py")) == sorted(TOP_LEVEL_ACTIVITIES)
    folders = [path for path in activities.iterdir() if path.is_dir() and path.name != "__pycache__"]
    assert len(folders) >= 8
    unexplained = [folder.name for folder in folders
                   if len(ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) or "") < 200]
    assert unexplained == []
    documented = (ROOT / "docs" / "architecture.md").read_text()
    assert [folder.name for folder in folders if f"activities/{folder.name}/" not in documented] == []


def test_the_steps_mirror_the_folders_of_activities() -> None:
    """workflows/steps/<folder>/<module>.py calls what activities/<folder>/<module>.py serves."""
    steps = ROOT / "workflows" / "steps"
    mirrored = [path.relative_to(steps) for path in steps.rglob("*.py")
                if path.parent != steps and path.name != "__init__.py"]
    assert mirrored
    served = [path for path in mirrored
              if (ROOT / "activities" / path).exists() or (ROOT / "activities" / path.with_suffix("")).is_dir()]
    assert [str(path) for path in mirrored if path not in served] == []
