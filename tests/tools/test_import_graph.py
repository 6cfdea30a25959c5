"""npusim's modules import each other in one layer order: the import graph has no cycle.

The graph is read from the sources with ``ast``: every ``import``/``from ... import`` of an npusim
module, at module level and inside functions (a function-level import closes a cycle as surely as
a module-level one, only later), relative and absolute. ``from package import name`` is an edge to
the submodule ``package.name`` when there is one, else to ``package``. Parent packages are not
edges: every module's parent chain ends at ``npusim/__init__.py``, which imports the whole
simulator, so counting them would make everything one cycle.
"""
from __future__ import annotations

import ast
from fnmatch import fnmatchcase
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2] / "npusim"

# ---- the graph
def modules(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> source file, for every .py under ``root`` (package ``package``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
             known: dict[str, Path], package: str) -> list[str]:
    """The modules one import statement names (before resolving to known modules)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:                                   # relative: from the containing package
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target != package and not target.startswith(package + "."):
        return []
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in known else target
            for a in node.names]


def import_graph(root: Path = ROOT, package: str = "npusim") -> dict[str, set[str]]:
    """Module -> the npusim modules it imports (anywhere in its source)."""
    known = modules(root, package)
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, path in known.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _targets(node, module, is_package, known, package):
                while target not in known and "." in target:   # a name inside a module
                    target = target.rsplit(".", 1)[0]
                if target in known and target != module:
                    graph[module].add(target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One concrete cycle through the first module of a component: [a, b, ..., a]."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    return paths[v] + [start]
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"{component} is not strongly connected")


def _describe(graph, components) -> str:
    return "\n".join(f"{len(c)} modules ({', '.join(c)}), e.g. {' -> '.join(a_cycle(graph, c))}"
                     for c in components)


# ---- npusim
def test_no_import_cycle_at_all():
    graph = import_graph()
    cycles = strongly_connected(graph)
    assert not cycles, "import cycles:\n" + _describe(graph, cycles)


LAYERS = [
    ("base", ["npusim.errors", "npusim.profiles", "npusim.progress", "npusim.hccl.types",
              "npusim.hccl.algo", "npusim.hccl.cost"]),
    ("device", ["npusim.device", "npusim.device.*", "npusim.hccl.move"]),
    ("runtime core", ["npusim.runtime", "npusim.runtime.runtime", "npusim.runtime.handles",
                      "npusim.runtime.pageable", "npusim.runtime.recording"]),
    ("kernel module", ["npusim.kernel.elf*", "npusim.kernel.program", "npusim.kernel.loader",
                       "npusim.kernel.printf", "npusim.kernel.cpu", "npusim.kernel.builtin",
                       "npusim.samples"]),
    ("runtime objects", ["npusim.runtime.device", "npusim.runtime.event", "npusim.runtime.stream",
                         "npusim.runtime.context", "npusim.runtime.model",
                         "npusim.runtime.functions", "npusim.runtime.census",
                         "npusim.runtime.hostmem", "npusim.runtime.args",
                         "npusim.runtime.cost", "npusim.runtime.argcheck", "npusim.runtime.peer"]),
    ("graph rules", ["npusim.runtime.taskgroup", "npusim.runtime.capture", "npusim.runtime.cond",
                     "npusim.runtime.tasks", "npusim.runtime.dump"]),
    ("runtime APIs", ["npusim.runtime.api_*", "npusim.hccl.diagnose", "npusim.hccl.comm",
                      "npusim.hccl.lower"]),
    ("facade tools", ["npusim.analysis.lint", "npusim.faults", "npusim.trace", "npusim.trace.chrome"]),
    ("facade", ["npusim.acl", "npusim.acl.*", "npusim.hccl", "npusim.hccl.api"]),
    ("Pythonic API", ["npusim", "npusim.api", "npusim.api.*", "npusim.analysis", "npusim.analysis.race",
                      "npusim.kernel", "npusim.kernel.decorator", "npusim.trace.savings",
                      "npusim.trace.plot", "npusim.sweep", "npusim.sweep.*"]),
    ("tools", ["npusim.plan", "npusim.plan.*", "npusim.cabi", "npusim.cabi.*", "npusim.samples.build", "npusim.demo",
               "npusim.testing", "npusim.testing.*"]),
    ("CLI", ["npusim.cli", "npusim.cli.*", "npusim.__main__"]),
]
"""The layer order of docs/architecture.md §1, lowest first: a module imports only from its own
layer or a lower one (module- and function-level imports alike)."""


def layer_of(module: str) -> int:
    hits = [i for i, (_, pats) in enumerate(LAYERS) if any(fnmatchcase(module, p) for p in pats)]
    assert len(hits) == 1, f"{module} is in {len(hits)} layers of LAYERS (exactly one expected)"
    return hits[0]


def test_imports_follow_the_layer_order():
    graph = import_graph()
    up = [f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})"
          for m, deps in sorted(graph.items()) for d in sorted(deps) if layer_of(d) > layer_of(m)]
    assert not up, "imports against the layer order:\n" + "\n".join(up)


def test_nothing_below_the_cli_imports_it():
    """The CLI is the top layer: only ``npusim.cli.*`` and ``npusim.__main__`` import it."""
    graph = import_graph()
    cli = {m for m in graph if m == "npusim.cli" or m.startswith("npusim.cli.")}
    users = {m for m, deps in graph.items() if deps & cli} - cli
    assert users == {"npusim.__main__"}


def test_the_walk_sees_the_cli_plan_and_elf_modules():
    graph = import_graph()
    assert "npusim.plan" in graph["npusim.cli.plan"]
    assert "npusim.kernel.elf" in graph["npusim.cli.elf"]
    assert {"npusim.plan.budget", "npusim.plan.simulation"} <= graph["npusim.plan"]
    assert "npusim.kernel.elflayout" in graph["npusim.kernel.elf"]


# ---- the walk itself, on a made-up package
def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_walk_resolves_relative_absolute_and_function_level_imports(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\nfrom .sub import c as _c\n",
        "b.py": "def f():\n    from pkg.sub.c import X\n    import pkg.a\n",
        "sub/__init__.py": "from .. import b\n",
        "sub/c.py": "X = 1\nfrom ..b import f\nimport os\n",
    })
    graph = import_graph(root, "pkg")
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b", "pkg.sub.c"},
                     "pkg.b": {"pkg.sub.c", "pkg.a"}, "pkg.sub": {"pkg.b"},
                     "pkg.sub.c": {"pkg.b"}}
    components = strongly_connected(graph)
    assert components == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    cycle = a_cycle(graph, components[0])
    assert cycle[0] == cycle[-1] == "pkg.a" and len(cycle) in (3, 4)


def test_walk_finds_no_cycle_in_a_layered_package(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "from . import top\n",
        "low.py": "",
        "mid.py": "from .low import *\n",
        "top.py": "def f():\n    from . import mid, low\n",
    })
    assert strongly_connected(import_graph(root, "pkg")) == []
