#!/usr/bin/env python3
"""Group the engine's modules into rooms (issue 31, "The engine's folders show its architecture").

    python3 reorganise.py REPO_ROOT [--no-ruff]

Applied once, on a clean work tree of main, after the other open issues have landed:
  1. `git mv` every module of MOVES into its room (sandbox/, judge/, lab/; a few beside their users);
  2. rewrites every reference to a moved module in the repository's text files: Python imports (absolute and
     relative, `from autograder import a, b` split by room), dotted names (`autograder.x.y`, in code, strings and
     docs), paths (`autograder/x.py`, `autograder/child/`, `ENGINE / "e2e.py"`, `"autograder" / "child"`);
  3. applies PATCHES: the few run-time paths that depend on a module's folder (`Path(__file__).parent`...),
     each an exact text that must be found exactly once (else the script stops and names it);
  4. writes the rooms' `__init__.py`, ARCHITECTURE.md's map and tests/test_architecture.py's room rules;
  5. sorts the rewritten imports (`ruff check --select I --fix`) and lists any old reference left.
  6. carries each lab's e2e_mistakes.json over (carry_outcomes.py: only where the file was current before and the
     move provably changed no code it was computed from; its recomputation trains every bank mistake, 1.5-3 h).

It refuses a tree where it already ran (autograder/judge/ exists), a dirty tree, and a module of autograder/
that no line of MOVES or KEEP places (add it to the table: every module has a room).

Afterwards (not done here): the other data files are stale, since their fingerprints include the code of the
engine's checks and e2e.py, whose import lines changed (`refresh` recomputes them in a few minutes):
    python -m autograder refresh; python -m autograder --lab labs/lab13 refresh;
    python -m autograder --lab tests/toylab refresh
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import carry_outcomes  # beside this file

# ---------------------------------------------------------------------------------------------------------------
# The table: old module (dotted) -> new module. A package moves with everything under it.
ROOMS = {
    "sandbox": ("sandbox", "isolation", "seccomp", "ipc", "budget", "preflight", "secret_files", "textsafe",
                "remote", "readable", "filetree", "notebook", "child"),
    "judge": ("grade", "lanes", "machine", "e2e", "outcome", "results", "report", "diagnosis", "feedback_policy",
              "discovery", "templating", "self_check", "notebook_checks"),
    "lab": ("config", "lab_folder", "domain_spec", "paths", "registry", "bank", "reference", "starter",
            "fingerprints", "new_lab", "lab_problems"),
}
MOVES = {f"autograder.{m}": f"autograder.{room}.{m}" for room, mods in ROOMS.items() for m in mods}
MOVES.update({
    "autograder.domains": "autograder.checks.domains",           # a declared domain's draws: Calls (checks.tools)
    "autograder.spreadsheet": "autograder.batch.spreadsheet",    # only class grading writes CSV files
    "autograder.validity.local": "autograder.checks.local",      # the upward import checks/examples -> validity
    "autograder.validity.entries": "autograder.lab.entries",     # the upward import diagnosis -> validity
})
# Modules other open branches add (issue 31's declared labs, warm children): placed when present, skipped if not.
OPTIONAL = {
    "autograder.zygote": "autograder.sandbox.zygote",              # forks the warm sandboxed children
    "autograder.declared_lab": "autograder.judge.declared_lab",    # a lab's hooks derived from grading.yaml
}
OPTIONAL_ROWS = {  # their rows in ARCHITECTURE.md's map, after the row holding the first text
    "autograder.zygote": ("`budget.py`, `filetree.py`, `notebook.py` |",
                          "| | `zygote.py`, `child/zygote.py` | warm children: forked from a process that has imported torch, "
                          "each confining itself as a fresh child does (the no-bubblewrap level only, docs/isolation.md) |"),
    "autograder.declared_lab": ("`self_check.py`, `notebook_checks.py` |",
                                "| | `declared_lab.py` | the hooks of a lab that writes no `grading/lab.py`, derived from "
                                "its grading.yaml |"),
}
# What stays at the top of autograder/ (with the rooms above): 12 entries instead of 48.
KEEP = {"__init__", "__main__", "checks", "replay", "validity", "batch", "bundling", "commands", "templates",
        "__pycache__"}

ROOM_DOCS = {
    "sandbox": "The trust boundary: everything that starts, confines and hears the sandboxed child (bubblewrap, own uid,\n"
               "Landlock, seccomp, rlimits, cgroups; the wire and its validation; the bounded notebook conversion).\n"
               "No module outside this package starts or confines a child (tests/test_architecture.py).",
    "judge": "Running a grade and scoring it: discovery, lanes, checks and e2e tests run, outcomes, results, reports.",
    "lab": "A lab's declarations as the engine loads them: grading.yaml (config), the lab folder's paths, its hooks\n"
           "(registry), the reference, the bank, the starter, the fingerprints of its data files, a new lab's files.",
}

# Run-time paths that depend on a module's folder: (file after the move, exact old text, new text).
PATCHES = [
    ("autograder/lab/lab_folder.py", "ROOT = Path(__file__).resolve().parent.parent ",
     "ROOT = Path(__file__).resolve().parents[2]"),
    ("autograder/lab/paths.py", "ENGINE = Path(__file__).resolve().parent  ", "ENGINE = Path(__file__).resolve().parents[1]"),
    ("autograder/sandbox/isolation.py", "    package = Path(__file__).resolve().parent\n",
     "    package = paths.ENGINE.resolve()\n"),
    ("autograder/judge/report.py", 'Path(__file__).with_name("templates")',
     'Path(__file__).resolve().parents[1] / "templates"'),
    ("autograder/bundling/engine.py", 'DATA = ("templates", "child")', 'DATA = ("templates", "sandbox/child")'),
    ("autograder/bundling/engine.py",  # the student bundle keeps exactly its modules: these two were under validity/
     '"autograder.bundling", "autograder.validity",',
     '"autograder.bundling", "autograder.validity", "autograder.checks.local", "autograder.lab.entries",'),
    ("pyproject.toml", '"child/*.py"', '"sandbox/child/*.py"'),
    # paths relative to the engine's folder, in tests
    ("tests/test_templating.py", '{"templating.py"}', '{"judge/templating.py"}', 2),
    ("tests/test_templating.py", '== {"spreadsheet.py"}', '== {"batch/spreadsheet.py"}'),
    # validity/ is outside mypy (pyproject.toml); its two modules that leave it are typed cleanly
    ("autograder/checks/local.py", "        grads = []\n", "        grads: list[torch.Tensor | None] = []\n"),
    ("autograder/checks/local.py", "    spec = importlib.util.spec_from_file_location(name, path)\n",
     "    spec = importlib.util.spec_from_file_location(name, path)\n"
     "    assert spec is not None and spec.loader is not None, path\n"),
]

TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".txt", ".cfg", ".ini", ".sh", ".j2", ".run", ""}
SKIP_PARTS = {".venv", "build", "__pycache__", ".git", "node_modules"}
HERE = Path(__file__).resolve().parent


def new_name(module: str) -> str:
    """The module's dotted name after the move (itself when it does not move)."""
    for old in sorted(MOVES, key=len, reverse=True):
        if module == old or module.startswith(old + "."):
            return MOVES[old] + module[len(old):]
    return module


STARTED = False  # the tree has been changed: a failure from here on says how to undo


def fail(message: str) -> None:
    undo = "\nundo: git reset --hard && git clean -fd autograder" if STARTED else ""
    sys.exit(f"reorganise: {message}{undo}")


# --- Python imports --------------------------------------------------------------------------------------------

def package_of(path: Path, root: Path) -> str | None:
    """The dotted package a file of autograder/ belongs to (for relative imports), before the move."""
    rel = path.relative_to(root)
    if rel.parts[0] != "autograder":
        return None
    return ".".join(rel.parts[:-1])


def resolve(node: ast.ImportFrom, package: str | None) -> str | None:
    if not node.level:
        return node.module
    if package is None:
        return None
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def alias_text(a: ast.alias) -> str:
    return a.name + (f" as {a.asname}" if a.asname else "")


def rewrite_from(module: str, names: list[ast.alias]) -> list[str] | None:
    """`from module import names` after the move, as statements grouped by new module (None: unchanged)."""
    if module != "autograder" and not module.startswith("autograder."):
        return None
    groups: dict[str, list[str]] = {}
    for a in names:
        full = f"{module}.{a.name}"
        target = new_name(full).rpartition(".")[0] if a.name != "*" else new_name(module)
        groups.setdefault(target, []).append(alias_text(a))
    if list(groups) == [module]:
        return None
    return [f"from {target} import {', '.join(items)}" for target, items in sorted(groups.items())]


def rewrite_import(names: list[ast.alias]) -> list[str] | None:
    if not any(new_name(a.name) != a.name for a in names):
        return None
    return [f"import {new_name(a.name)}" + (f" as {a.asname}" if a.asname else "") for a in names]


def import_edits(text: str, path: Path, root: Path) -> dict[int, tuple[int, str]]:
    """{first line (0-based): (last line, replacement text)} for the import statements that change."""
    tree = ast.parse(text, filename=str(path))
    lines = text.splitlines(keepends=True)
    package = package_of(path, root)
    edits: dict[int, tuple[int, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = resolve(node, package)
            if module is None:
                continue
            new = rewrite_from(module, node.names)
            if new is None and node.level and new_name(f"{package}.x") != f"{package}.x":
                # a relative import in a module that moves: made absolute (where it points does not move)
                new = [f"from {module} import {', '.join(alias_text(a) for a in node.names)}"]
        elif isinstance(node, ast.Import):
            new = rewrite_import(node.names)
        else:
            continue
        if new is None:
            continue
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        prefix = lines[first][: node.col_offset]
        suffix = lines[last][node.end_col_offset:]
        if prefix.strip() or (len(new) > 1 and suffix.strip() and not suffix.strip().startswith("#")):
            fail(f"{path}:{node.lineno}: an import sharing its line with other code: rewrite it by hand")
        comment = suffix.rstrip("\n") if suffix.strip().startswith("#") else ""  # `# noqa` on each split line
        body = (comment + "\n" + prefix).join(new)
        edits[first] = (last, prefix + body + rewrite_text(suffix))
    return edits


# --- Dotted names and paths anywhere ---------------------------------------------------------------------------

def _patterns() -> re.Pattern[str]:
    olds = sorted(MOVES, key=len, reverse=True)
    dotted = "|".join(re.escape(o) for o in olds)
    slashed = "|".join(re.escape(o.replace(".", "/")) for o in olds)
    tops = "|".join(re.escape(o.split(".", 1)[1]) for o in olds if o.count(".") == 1)
    return re.compile(
        rf"(?P<dotted>(?<![\w.])(?:{dotted})(?!\w))"
        rf"|(?P<slashed>(?<![\w./-])(?:{slashed})(?![\w]))"
        rf"|(?P<joined>(?P<base>\bENGINE|\"autograder\") / \"(?P<top>{tops})(?P<ext>\.py)?\")")


PATTERN = _patterns()


def _replace(m: re.Match[str]) -> str:
    if m.group("dotted"):
        return new_name(m.group("dotted"))
    if m.group("slashed"):
        return new_name(m.group("slashed").replace("/", ".")).replace(".", "/")
    room = new_name(f"autograder.{m.group('top')}").split(".")[1]
    return f'{m.group("base")} / "{room}" / "{m.group("top")}{m.group("ext") or ""}"'


def rewrite_text(text: str) -> str:
    return PATTERN.sub(_replace, text)


FROM_LINE = re.compile(r"^(?P<indent>\s*)from (?P<module>autograder[\w.]*) import (?P<names>[\w, ]+?)(?P<rest>\s*(#.*)?)$")


IN_STRING = re.compile(r"from (?P<module>autograder[\w.]*) import (?P<names>[\w, ]+?)(?P<end>\\n|;|\"|')")


def _in_string(m: re.Match[str]) -> str:
    aliases = [ast.alias(name=n.strip()) for n in m.group("names").split(",") if n.strip()]
    new = rewrite_from(m.group("module"), aliases)
    return m.group(0) if new is None else "\\n".join(new) + m.group("end")


def rewrite_doc_line(line: str) -> str:
    """A line of a non-Python file: a one-line `from autograder... import a, b` as Python would be, else names."""
    m = FROM_LINE.match(line.rstrip("\n"))
    if m:
        aliases = [ast.alias(name=n.strip()) for n in m.group("names").split(",") if n.strip()]
        new = rewrite_from(m.group("module"), aliases)
        if new is not None:
            end = "\n" if line.endswith("\n") else ""
            return m.group("indent") + ("\n" + m.group("indent")).join(new) + m.group("rest") + end
    return rewrite_text(IN_STRING.sub(_in_string, line))


def rewrite_file(path: Path, root: Path) -> bool:
    text = path.read_text()
    if path.suffix == ".py":
        edits = import_edits(text, path, root)
        lines = text.splitlines(keepends=True)
        out, i = [], 0
        while i < len(lines):
            if i in edits:
                last, body = edits[i]
                end = "\n" if lines[last].endswith("\n") else ""
                out.append(body.rstrip("\n") + end)
                i = last + 1
            else:  # code, or a string: an import line in a string (code a test writes) is rewritten as code
                out.append(rewrite_doc_line(lines[i]))
                i += 1
        new = "".join(out)
    else:
        new = "".join(rewrite_doc_line(line) for line in text.splitlines(keepends=True))
    if new != text:
        path.write_text(new)
        return True
    return False


# --- The steps -------------------------------------------------------------------------------------------------

def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def check_tree(root: Path) -> None:
    engine = root / "autograder"
    if (engine / "judge").exists() or (engine / "sandbox").is_dir():
        fail("already applied (autograder/judge/ or autograder/sandbox/ exists)")
    if git(root, "status", "--porcelain", "--untracked-files=no").strip():
        fail("the work tree has uncommitted changes: commit or stash them first")
    tracked = {Path(p).parts[1].removesuffix(".py") for p in git(root, "ls-files", "autograder").split()
               if len(Path(p).parts) > 1}
    unplaced = sorted(t for t in tracked if t not in KEEP and f"autograder.{t}" not in MOVES)
    if unplaced:
        fail(f"modules with no room in the table (MOVES or KEEP): {unplaced}")
    for rel, old, _, *times in PATCHES:
        before = rel
        for o, n in MOVES.items():
            if rel.removesuffix(".py") == n.replace(".", "/"):
                before = o.replace(".", "/") + ".py"
        count = (root / before).read_text().count(old) if (root / before).is_file() else 0
        if count != (times or [1])[0]:
            fail(f"{before}: the patch expects {old!r} {(times or [1])[0]} time(s), found {count}: update PATCHES "
                 "(nothing was changed)")
    missing = sorted(o for o in MOVES if not (root / (o.replace(".", "/") + ".py")).is_file()
                     and not (root / o.replace(".", "/")).is_dir())
    if missing:
        fail(f"modules of the table not found (renamed or removed on main?): {missing}")


def move_modules(root: Path) -> None:
    for room in ROOMS:
        (root / "autograder" / room).mkdir()
        init = root / "autograder" / room / "__init__.py"
        init.write_text(f'"""{ROOM_DOCS[room]}\n\nARCHITECTURE.md: what each module of this room does."""\n')
        git(root, "add", str(init.relative_to(root)))
    for old, new in MOVES.items():
        src = root / (old.replace(".", "/") + ".py")
        dst = root / (new.replace(".", "/") + ".py")
        if not src.is_file():  # a package
            src, dst = src.with_suffix(""), dst.with_suffix("")
        if src.is_dir():
            shutil.rmtree(src / "__pycache__", ignore_errors=True)
        git(root, "mv", str(src.relative_to(root)), str(dst.relative_to(root)))


def text_files(root: Path) -> list[Path]:
    files = []
    for rel in git(root, "ls-files").splitlines():
        path = root / rel
        if SKIP_PARTS & set(Path(rel).parts) or not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        if path.suffix == "" and path.name not in ("Makefile", "Dockerfile", "run") and ".ci" not in path.parts:
            continue
        files.append(path)
    return files


def apply_patches(root: Path) -> None:
    for rel, old, new, *times in PATCHES:
        path = root / rel
        text = path.read_text()
        if text.count(old) != (times or [1])[0]:
            fail(f"{rel}: expected the text {old!r} {(times or [1])[0]} time(s), found {text.count(old)}")
        path.write_text(text.replace(old, new))


def write_architecture(root: Path) -> None:
    """ARCHITECTURE.md's map (the section between "## The map" and the next "## ") and the room rules."""
    doc = root / "ARCHITECTURE.md"
    text = doc.read_text()
    start = text.index("## The map")
    end = text.index("\n## ", start + 1)
    rows = (HERE / "architecture_map.md").read_text().rstrip("\n").split("\n")
    for module, (after, row) in OPTIONAL_ROWS.items():
        if module in MOVES:
            at = next(i for i, line in enumerate(rows) if after in line)
            rows.insert(at + 1, row)
    text = text[:start] + "\n".join(rows) + "\n" + text[end:]
    doc.write_text(text)
    test = root / "tests" / "test_architecture.py"
    test.write_text(test.read_text().rstrip("\n") + "\n\n\n" + (HERE / "room_rules.py").read_text())


LIMIT = 120  # ruff's line-length


def _break_at(line: str, cuts: list[tuple[int, str]]) -> list[str] | None:
    """The line cut at the last (column, continuation) of `cuts` that leaves its head within LIMIT."""
    fits = [(c, cont) for c, cont in cuts if c <= LIMIT and line[:c].strip()]
    if not fits:
        return None
    c, cont = fits[-1]
    return [line[:c].rstrip(" "), cont + line[c:].lstrip(" ")]


def wrap_line(line: str, tokens: list) -> list[str]:
    """A prose line (comment or inside a triple-quoted string) cut at spaces; else the line itself."""
    indent = line[: len(line) - len(line.lstrip(" "))]
    stripped = line.lstrip(" ")
    lead = indent + ("# " if stripped.startswith("#") else "")
    cuts = [(i, lead) for i, ch in enumerate(line) if ch == " " and i > len(lead) and line[i - 1] != " "]
    head, *rest = _break_at(line, cuts) or [line]
    return [head, *(wrap_line(rest[0], []) if rest and len(rest[0]) > LIMIT else rest)]


def _split_string(line: str) -> str:
    """A code line whose plain "..." string holds \\n escapes: cut after the last one that fits, the rest a string
    of its own on the next line (implicit concatenation: the line is inside brackets)."""
    cuts = [m.end() for m in re.finditer(r"\\n", line) if m.end() < LIMIT]
    if not cuts:
        return line
    c = cuts[-1]
    start = line.rfind('"', 0, c)
    if start < 0 or line[start - 1:start] in ("f", "r", "b"):
        return line
    return line[:c] + '"\n' + " " * start + '"' + line[c:]


def wrap_long_lines(path: Path) -> list[str]:
    """Lines over LIMIT that name the engine (the rewrite made them longer) cut where Python allows: prose in
    comments and triple-quoted strings at a space, code after a comma inside brackets. Returns what is left."""
    import io
    import tokenize
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    long = {n for n, line in enumerate(lines) if len(line.rstrip("\n")) > LIMIT and "autograder" in line}
    if not long:
        return []
    kinds: dict[int, str] = {}       # line -> "prose" | "code"
    commas: dict[int, list[tuple[int, str]]] = {}
    stack: list[tuple[int, int]] = []  # open brackets: (line, column after it)
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        (r0, c0), (r1, c1) = tok.start, tok.end
        if tok.type == tokenize.STRING and tok.string.lstrip("rbuRBUfF")[:3] in ('"""', "'''"):
            for r in range(r0, r1 + 1):
                if r - 1 in long:
                    kinds[r - 1] = "prose" if (r0 != r1 or r0 - 1 not in kinds) else kinds[r - 1]
        elif tok.type == tokenize.COMMENT and r0 - 1 in long and lines[r0 - 1][:c0].strip() == "":
            kinds[r0 - 1] = "prose"
        elif tok.type == tokenize.OP and tok.string in "([{":
            stack.append((r0, c1))
        elif tok.type == tokenize.OP and tok.string in ")]}":
            if stack:
                stack.pop()
        elif tok.type == tokenize.OP and tok.string == "," and r0 - 1 in long and stack:
            line = lines[r0 - 1]
            opened_here = [c for r, c in stack if r == r0]
            cont = " " * (opened_here[-1] if opened_here else len(line) - len(line.lstrip(" ")))
            commas.setdefault(r0 - 1, []).append((c1, cont))
            kinds.setdefault(r0 - 1, "code")
    out, left = [], []
    for n, line in enumerate(lines):
        end = "\n" if line.endswith("\n") else ""
        body = line.rstrip("\n")
        if n in long and kinds.get(n) != "prose" and '\\n' in body and '"' in body:
            body = _split_string(body)
        if n in long and kinds.get(n) == "prose":
            new = wrap_line(body, [])
        elif n in long and n in commas:
            new = _break_at(body, commas[n]) or [body]
        else:
            new = [body]
        if any(len(x) > LIMIT for x in new) and n in long:
            left.append(f"{path}:{n + 1}")
        out.append("\n".join(new) + end)
    path.write_text("".join(out))
    return left


REQUOTE = r"""
import re, sys, tempfile, zipfile
from pathlib import Path
from autograder.bundling.pipeline import build_release
with tempfile.TemporaryDirectory() as tmp:
    built = {p.name: sum(not i.is_dir() for i in zipfile.ZipFile(p).infolist())
             for p in build_release(Path(tmp) / "out").values() if p.suffix == ".zip"}
root = Path(sys.argv[1])
for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
    text = doc.read_text()
    new = re.sub(r"(`([\w.-]+\.zip)`\s+[\d,]+\s+KiB\s+\()(\d+)(\s+files)",
                 lambda m: m.group(1) + str(built.get(m.group(2), m.group(3))) + m.group(4), text)
    if new != text:
        doc.write_text(new)
        print(f"reorganise: {doc.name}: bundles' file counts updated")
"""


def requote_sizes(root: Path) -> None:
    """The bundles' file counts quoted in README.md and docs/*.md (tests/test_docs_sizes.py): the rooms' three
    `__init__.py` files ship too. Built with the repository's own venv (about a second)."""
    python = root / ".venv" / "bin" / "python"
    if not python.exists():
        print("reorganise: no .venv: update the bundles' file counts in the docs by hand (tests/test_docs_sizes.py)")
        return
    if subprocess.run([str(python), "-c", REQUOTE, str(root)], cwd=root).returncode:
        print("reorganise: the release build failed (above): the docs' bundle file counts are not updated")


def sort_imports(root: Path, changed: list[Path]) -> None:
    ruff = root / ".venv" / "bin" / "ruff"
    exe = str(ruff) if ruff.exists() else shutil.which("ruff")
    if exe is None:
        print("reorganise: ruff not found: run `ruff check --select I --fix .` yourself")
        return
    py = [str(p) for p in changed if p.suffix == ".py" and p.exists()]
    subprocess.run([exe, "check", "--select", "I", "--fix", "--quiet", *py], cwd=root)


CHAIN = re.compile(r"(?<![\w./-])autograder(?:[./]\w+)+")


def stale(chain: str, root: Path) -> bool:
    """Whether `autograder.a.b...` (or a/b path) names an old place: after its longest prefix that is a module
    of the new tree comes a name the table moved away from there, or anything after a room's package."""
    parts = re.split(r"[./]", chain)
    i = len(parts)
    while i > 1 and not ((root.joinpath(*parts[:i]).with_suffix(".py")).is_file() or root.joinpath(*parts[:i]).is_dir()):
        i -= 1
    if i == len(parts) or (i == len(parts) - 1 and parts[-1] == "py"):
        return False
    prefix, following = ".".join(parts[:i]), parts[i]
    return f"{prefix}.{following}" in MOVES or (prefix.count(".") == 1 and prefix.split(".")[1] in ROOMS)


def leftovers(root: Path) -> list[str]:
    found = []
    for path in text_files(root):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if any(stale(m.group(0), root) for m in CHAIN.finditer(line)):
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()[:110]}")
    return found


def is_current(root: Path, lab: str) -> bool:
    """Whether the lab's e2e_mistakes.json holds the fingerprint of the layout before the move."""
    data = json.loads((root / lab / carry_outcomes.DATA).read_text())
    return data.get("fingerprint") == carry_outcomes.fingerprint(root, lab, carry_outcomes.MODULE)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    root = Path(argv[0]).resolve()
    MOVES.update({o: n for o, n in OPTIONAL.items() if (root / (o.replace(".", "/") + ".py")).is_file()})
    global PATTERN
    PATTERN = _patterns()
    check_tree(root)
    before = {lab: (is_current(root, lab), carry_outcomes.sources(root, lab, "autograder/e2e.py"))
              for lab in carry_outcomes.LABS if (root / lab / carry_outcomes.DATA).is_file()}
    global STARTED
    STARTED = True
    move_modules(root)
    changed = [p for p in text_files(root) if rewrite_file(p, root)]
    apply_patches(root)
    write_architecture(root)
    if "--no-ruff" not in argv:
        sort_imports(root, changed)
    too_long: list[str] = []
    for _ in range(4):  # a code line cut once may still be long: cut again (its tokens read anew)
        too_long = [x for p in changed if p.suffix == ".py" and p.exists() for x in wrap_long_lines(p)]
    left = leftovers(root)
    print(f"reorganise: moved {len(MOVES)} modules, rewrote {len(changed)} files")
    if left:
        print("reorganise: references the rewrite left (old names that may be new ones by chance; check):")
        print("\n".join("  " + line for line in left))
    requote_sizes(root)
    moved = {rel: new_name(rel[:-3].replace("/", ".")).replace(".", "/") + ".py"
             for _, texts in before.values() for rel in texts if rel.startswith("autograder/")}
    for line in carry_outcomes.carry(root, before, moved, new_name):
        print(f"reorganise: {line}")
    if too_long:
        print("reorganise: lines still over 120 characters (wrap by hand):\n  " + "\n  ".join(too_long))
    print("next: ruff check . && mypy; python -m autograder refresh (and --lab labs/lab13, --lab tests/toylab)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
