"""Scripts outside ``src/`` use the library's public API only: none assigns to an attribute of a library module
or class (a method variant is a config option of its stage, never a patch) and none imports a private name."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

#: folders of code that is not the library (tests may monkeypatch within a test's scope)
SCRIPT_DIRS = ("analysis", "benchmarks", "deployments", "flows", "tasks")
LIBRARY = "embodied_safety"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def violations(source: str, filename: str) -> list[str]:
    """``file:line: what`` for each library patch or private library import in ``source``."""
    tree = ast.parse(source, filename=filename)
    bound: set[str] = set()  # local names bound to library modules, classes or functions
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == LIBRARY or a.name.startswith(LIBRARY + "."):
                    bound.add((a.asname or a.name).split(".")[0])
                    if any(_private(p) for p in a.name.split(".")):
                        found.append(f"{filename}:{node.lineno}: imports private module {a.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and (node.module == LIBRARY or node.module.startswith(
                LIBRARY + ".")):
            if any(_private(p) for p in node.module.split(".")):
                found.append(f"{filename}:{node.lineno}: imports from private module {node.module}")
            for a in node.names:
                bound.add(a.asname or a.name)
                if _private(a.name):
                    found.append(f"{filename}:{node.lineno}: imports private name {node.module}.{a.name}")

    def root(expr: ast.expr) -> str | None:
        while isinstance(expr, ast.Attribute):
            expr = expr.value
        return expr.id if isinstance(expr, ast.Name) else None

    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") \
                and node.args and root(node.args[0]) in bound:
            found.append(f"{filename}:{node.lineno}: {node.func.id} on library object {ast.unparse(node.args[0])}")
        for t in targets:
            if isinstance(t, ast.Attribute) and root(t) in bound:
                found.append(f"{filename}:{node.lineno}: assigns to library attribute {ast.unparse(t)}")
        if isinstance(node, ast.Attribute) and root(node) in bound and _private(node.attr):
            found.append(f"{filename}:{node.lineno}: uses private library name {ast.unparse(node)}")
    return found


def test_no_script_patches_the_library_or_imports_a_private_name():
    found = []
    for d in SCRIPT_DIRS:
        for f in sorted((ROOT / d).rglob("*.py")):
            found += violations(f.read_text(), str(f.relative_to(ROOT)))
    assert not found, "\n".join(found)


def test_the_check_sees_a_patch_and_a_private_import():
    src = ("from embodied_safety.shield.rl.ppo import GatedPPO, _helper\nimport embodied_safety.io as eio\n"
           "GatedPPO.update = lambda self: None\neio.write_json = print\nsetattr(GatedPPO, 'x', 1)\n"
           "eio._atomic(1)\nlocal = object()\nlocal.attr = 1\n")
    found = [f.split(": ", 1)[1] for f in violations(src, "s.py")]
    assert found == ["imports private name embodied_safety.shield.rl.ppo._helper",
                     "assigns to library attribute GatedPPO.update",
                     "assigns to library attribute eio.write_json",
                     "setattr on library object GatedPPO",
                     "uses private library name eio._atomic"], found
    assert not violations("import numpy as np\nnp.x = 1\n", "ok.py")


def test_no_library_module_is_a_command():
    """Command-line entry points live in analysis/, benchmarks/ and deployments/ (and the stages' flows/): no module
    under src/ carries an ``if __name__ == "__main__"`` block."""
    found = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) \
                    and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found
