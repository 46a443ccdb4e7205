"""No circle of imports between library modules: every module of ``embodied_safety`` can be read, tested and moved
with what it imports, never with what imports it. Imports inside functions count too (they are the same
dependency, deferred). A module importing its own package (``from .. import x``) is not a circle."""

from __future__ import annotations

import networkx as nx

from embodied_safety.codekey import REPO, imported_modules


def _library_modules() -> list[str]:
    src = REPO / "src"
    names = []
    for f in sorted((src / "embodied_safety").rglob("*.py")):
        parts = f.relative_to(src).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_no_import_cycle_between_library_modules():
    graph = nx.DiGraph()
    for m in _library_modules():
        graph.add_node(m)
        for t in imported_modules(m):
            if t != m and not m.startswith(t + ".") and not t.startswith(m + "."):  # packages and their members
                graph.add_edge(m, t)
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)
