"""Entries at the top of autograder/, module count and the longest import chain (module level and in functions)."""
import ast, sys, functools
from pathlib import Path
root = Path(sys.argv[1])
def mn(p):
    parts = list(p.relative_to(root).with_suffix("").parts); return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
MOD = {mn(p): p for p in (root / "autograder").rglob("*.py") if "child" not in p.parts and "__pycache__" not in p.parts}
def deps(m):
    p = MOD[m]; package = m if p.name == "__init__.py" else m.rpartition(".")[0]; out = set()
    for node in ast.walk(ast.parse(p.read_text())):
        names = []
        if isinstance(node, ast.Import): names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split("."); base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for n in names:
            while n and n not in MOD: n = n.rpartition(".")[0]
            if n and n != m and n != "autograder": out.add(n)
    return out
G = {m: deps(m) for m in MOD}
@functools.lru_cache(None)
def depth(m): return 1 + max((depth(n) for n in G[m]), default=0)
top = sorted(p.name for p in (root / "autograder").iterdir() if p.name != "__pycache__")
print(f"top-level entries: {len(top)}; modules: {len(MOD)}; longest import chain: {max(depth(m) for m in MOD)} modules")
