"""Text from the child reaches a sentence only through autograder/sandbox/textsafe.py: a walk of every construction
site.

THE RULE (checked on the AST of every module under autograder/ but autograder/sandbox/child/, which runs in the child):

Sites: every call of CheckFailed, Finding (and `cls(...)` in its classmethods), Finding.failed_call,
SubmissionError, ChildFailure and `<x>.fail(...)` (tools.Answer.fail). Each parameter of each of them is
declared below as SHOWN (with the test's outcome), WITH_INPUTS (shown only with its inputs) or DATA (not
text); a new parameter fails this test until it is declared. A `**mapping` argument counts as SHOWN.

Levels of an expression, lowest first:
  GRADER       the grader's own values, and every call of a textsafe WORDS function (whatever its arguments:
               they name at most a few bits of the child's choosing);
  INPUT        text shown only with the inputs: a call of a textsafe TEXT function or of tools.fmt_call, and the
               attributes that hold such text (INPUT_ATTRIBUTES: .detail, .inputs, .got, ...);
  CHILD        child data: what a boundary call returns (CHILD_CALLS: `.call`, `.answer`, `.request`, `.wait`,
               `_error_of`), the attributes the boundary fills (CHILD_ATTRIBUTES: .value, .grads, .exc_type,
               .output, ...), and the name bound by an `except` of any exception but the grader's own
               (GRADER_EXCEPTIONS, whose str() is a sentence built at a site this test checks).
An expression has the highest level of its parts; a textsafe call replaces its arguments' levels by its own.
Levels flow, conservatively (in any order of the statements), through assignments, loop, `with` and
comprehension targets (element-wise through tuples, zip and enumerate), through returns (a call of a function
has the level it returns, matched by name) and into parameters (the highest level any call passes them,
matched by name; a method's receiver is not passed to `self`; positional arguments fill the positional
parameters, then `*args`, never a keyword-only one). A call of a library's function (`torch.where(...)`, on a
name an import from outside the package binds) is unresolved: it has the highest level of its arguments,
and is never matched to a judge method of the same name (`Config.where`), whose parameters and return it
would otherwise share with every such call in the package.

Then: a SHOWN argument is GRADER, and a WITH_INPUTS argument is at most INPUT: child data becomes text only
inside textsafe, and only WORDS may stand in what students see with the outcome. EXEMPT lists the sites
allowed more, each with its reason. The adversarial grades (tests/test_sandbox_adversarial.py,
test_a_withheld_input_never_reaches_a_visible_field) check the same property on real reports.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field

import pytest
import torch

from autograder.checks import CheckFailed
from autograder.checks.tools import Answer
from autograder.judge import outcome
from autograder.judge.outcome import Finding, GradeResult, TestResult, inputs_shown, summary_lines
from autograder.lab.paths import ROOT
from autograder.sandbox import textsafe
from autograder.sandbox.remote import SubmissionError
from autograder.sandbox.sandbox import ChildFailure

PACKAGE = ROOT / "autograder"
GRADING = ROOT / "grading"
GRADER, INPUT, CHILD = 0, 1, 2

SHOWN = {"message", "kind", "compared", "hint", "details"}
WITH_INPUTS = {"inputs", "expected", "got", "submission_text", "detail"}
DATA = {"function", "args", "kwargs", "answer", "exc_type", "plots", "metrics", "private_inputs", "child_saw"}
SITES = {  # site -> the callable whose parameters its arguments fill
    "CheckFailed": CheckFailed, "Finding": Finding, "failed_call": Finding.failed_call,
    "SubmissionError": SubmissionError, "ChildFailure": ChildFailure, "fail": Answer.fail,
}
CHILD_METHODS = {"call", "answer", "request", "wait"}  # `sub.call(...)`, `fn.answer(...)`, `self.proc.wait()`
CHILD_FUNCTIONS = {"_error_of"}
CHILD_ATTRIBUTES = {"value", "grads", "answer", "exc_type", "hello", "output"}
INPUT_ATTRIBUTES = {"detail", "inputs", "expected", "got", "submission_text"}
INPUT_FUNCTIONS = {"fmt_call"}  # formats a test's input (tools.py)
GRADER_EXCEPTIONS = {"SubmissionError", "ChildFailure", "CheckFailed",
                     "OSError",  # the kernel's words about the judge's own file operations
                     "NotebookError"}  # notebook.py's words on converting the file, before any test input is sent
EXEMPT = {
    # importing runs no test input (issue 20): an import error's text is shown with the outcome, except when the
    # child was restarted after calls (private_inputs), which takes the other branch
    ("autograder/judge/outcome.py", "failed_call", "message"),
}
WORDS = {f.__name__ for f in textsafe.WORDS}
TEXT = {f.__name__ for f in textsafe.TEXT}


def parameters(site: str) -> list[str]:
    names = list(inspect.signature(SITES[site]).parameters)
    return names[1:] if site in ("fail",) else names


# ------------------------------------------------------------------ the analysis
@dataclass(eq=False)
class Function:
    node: ast.AST                 # a def, or a whole module (its top-level code)
    module: str
    cls: str | None               # the class it is a method of
    params: list[str]             # positional ones, then *args, then keyword-only ones
    kwarg: str | None = None
    parent: "Function | None" = None
    positional: int = 0           # how many of `params` a positional argument may fill
    vararg: str | None = None     # the `*args` parameter, which takes the positional arguments past them
    children: dict[str, "Function"] = field(default_factory=dict)  # functions defined in its body
    levels: dict[str, int] = field(default_factory=dict)  # name -> level
    returns: int | tuple = GRADER  # a level, or a tuple of levels (when every return is a tuple of one length)

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<module>")

    @property
    def method(self) -> bool:
        return self.cls is not None and bool(self.params) and self.params[0] in ("self", "cls")

    def own_nodes(self):
        """Its nodes, without the bodies of the functions and classes defined inside it."""
        todo = list(ast.iter_child_nodes(self.node))
        while todo:
            node = todo.pop()
            yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                todo.extend(ast.iter_child_nodes(node))

    def lookup(self, name: str) -> int:
        scope: Function | None = self
        while scope is not None:
            if name in scope.levels:
                return scope.levels[name]
            scope = scope.parent
        return GRADER


class Analysis:
    """The levels of the judge's code (see the module docstring). Callees are resolved by scope and imports
    (`f()`, `module.f()`), `self.m()` to the class's own method, and `x.m()` to the one method of that name
    when only one class defines it; an unresolved call has the highest level of its receiver and arguments."""

    def __init__(self, sources: dict[str, str]):
        """`sources`: module path (autograder/x.py) -> its source."""
        trees = {m: ast.parse(s) for m, s in sources.items()}
        self.imports = {m: self._imports(t, m) for m, t in trees.items()}
        self.top: dict[str, Function] = {}
        self.classes: dict[tuple[str, str], dict[str, Function]] = {}
        self.methods: dict[str, list[Function]] = {}
        self.every: list[Function] = []
        self.handled: dict[int, int] = {}  # id of a Name node inside an `except ... as name` -> that name's level
        for module, tree in trees.items():
            top = Function(tree, module, None, [])
            self.top[module] = top
            self.every.append(top)
            self._collect(tree, module, top, None)

    # -------------------------------------------------- names
    @staticmethod
    def _imports(tree: ast.Module, path: str = "") -> dict[str, tuple[str, str]]:
        """alias -> (module, name) of `from M import name as alias`, and (M, "") of `import M as alias`; a relative
        import (the lab's grading/ package) is resolved from `path`, the importing module's file."""
        found = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                package = path.split("/")[:-1][:len(path.split("/")) - node.level]
                base = ".".join(package + ([node.module] if node.module else []))
                for a in node.names:
                    found[a.asname or a.name] = (base, a.name)
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    found[a.asname or a.name] = (node.module, a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    found[a.asname or a.name.split(".")[0]] = (a.name, "")
        return found

    @staticmethod
    def _path(module: str) -> str:
        return module.replace(".", "/") + ".py"

    def _module_alias(self, module: str, name: str) -> str | None:
        """The module path `name` stands for in `module` (`import M as name`, `from P import name`)."""
        target = self.imports.get(module, {}).get(name)
        if target is None:
            return None
        dotted = target[0] if not target[1] else f"{target[0]}.{target[1]}"
        return self._path(dotted) if target[1] == "" or self._path(dotted) in self.top or dotted.endswith(
            "textsafe") else None

    def _imported(self, module: str, name: str, depth: int = 0) -> tuple[str, str] | None:
        """(module path, name) of the definition `name` imports into `module` (through re-exports)."""
        target = self.imports.get(module, {}).get(name)
        if target is None or not target[1] or depth > 5:
            return None
        path = self._path(target[0])
        if path == "autograder/sandbox/textsafe.py" or any(c.name == target[1] for c in self._defined(path)):
            return path, target[1]
        return self._imported(path, target[1], depth + 1)

    def _library(self, f: Function, name: str) -> bool:
        """Whether `name`, in `f`, is what an import from outside the package binds (`import torch`, `from hypothesis
        import strategies as st`), not rebound in `f` or a function around it."""
        target = self.imports.get(f.module, {}).get(name)
        if target is None or target[0].split(".")[0] == PACKAGE.name:
            return False
        scope: Function | None = f
        while scope is not None and scope.parent is not None:  # the module's own code binds the import itself
            if name in scope.params or any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                                           for n in scope.own_nodes()):
                return False
            scope = scope.parent
        return True

    def _defined(self, path: str) -> list[Function]:
        top = self.top.get(path)
        return list(top.children.values()) if top else []

    def textsafe_function(self, f: Function, func: ast.expr) -> str | None:
        """The textsafe function a callee is (through imports and re-exports), or None."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if self._module_alias(f.module, func.value.id) == "autograder/sandbox/textsafe.py":
                return func.attr if func.attr in WORDS | TEXT else None
            return None
        if isinstance(func, ast.Name):
            if f.module == "autograder/sandbox/textsafe.py":
                return func.id if func.id in WORDS | TEXT else None
            found = self._imported(f.module, func.id)
            if found and found[0] == "autograder/sandbox/textsafe.py":
                return found[1] if found[1] in WORDS | TEXT else None
        return None

    def callee(self, call: ast.Call, f: Function) -> Function | None:
        func = call.func
        if isinstance(func, ast.Name):
            scope: Function | None = f
            while scope is not None:
                if func.id in scope.children:
                    return scope.children[func.id]
                scope = scope.parent
            found = self._imported(f.module, func.id)
            return self.top[found[0]].children.get(found[1]) if found and found[0] in self.top else None
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name):
                alias = self._module_alias(f.module, func.value.id)
                if alias in self.top:
                    return self.top[alias].children.get(func.attr)
                if self._library(f, func.value.id):  # `torch.where(...)` is torch's, not Config.where
                    return None
                owner = f
                while owner is not None and owner.cls is None:
                    owner = owner.parent
                if func.value.id in ("self", "cls") and owner is not None:
                    method = self.classes.get((owner.module, owner.cls), {}).get(func.attr)  # type: ignore[arg-type]
                    if method is not None:
                        return method
            candidates = self.methods.get(func.attr, [])
            return candidates[0] if len(candidates) == 1 else None
        return None

    def _collect(self, tree: ast.AST, module: str, parent: Function, cls: str | None) -> None:
        for node in ast.iter_child_nodes(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                positional = [a.arg for a in args.posonlyargs + args.args]
                vararg = args.vararg.arg if args.vararg else None
                params = positional + ([vararg] if vararg else []) + [a.arg for a in args.kwonlyargs]
                function = Function(node, module, cls, params, args.kwarg.arg if args.kwarg else None, parent,
                                    positional=len(positional), vararg=vararg)
                self.every.append(function)
                if cls is not None:
                    self.classes.setdefault((module, cls), {})[node.name] = function
                    self.methods.setdefault(node.name, []).append(function)
                else:
                    parent.children[node.name] = function
                self._collect(node, module, function, None)
            elif isinstance(node, ast.ClassDef):
                self._collect(node, module, parent, node.name)
            else:
                self._collect(node, module, parent, cls)

    # -------------------------------------------------- levels
    def level(self, e: ast.AST | None, f: Function) -> int:
        if e is None or isinstance(e, (ast.Constant, ast.Lambda)):
            return GRADER
        if isinstance(e, ast.Name):
            return self.handled.get(id(e), f.lookup(e.id))
        if isinstance(e, ast.Attribute):
            own = CHILD if e.attr in CHILD_ATTRIBUTES else INPUT if e.attr in INPUT_ATTRIBUTES else GRADER
            return max(own, self.level(e.value, f))
        if isinstance(e, ast.IfExp):  # a choice between values: the choice itself is control flow, not data
            return max(self.level(e.body, f), self.level(e.orelse, f))
        if isinstance(e, ast.Call):
            quoted = self.textsafe_function(f, e.func)
            if quoted is not None:
                return GRADER if quoted in WORDS else INPUT
            name = self._name(e)
            if name in INPUT_FUNCTIONS:
                return INPUT
            if (name in CHILD_METHODS and isinstance(e.func, ast.Attribute)) or name in CHILD_FUNCTIONS:
                return CHILD
            callee = self.callee(e, f)
            if callee is not None:
                return max(callee.returns) if isinstance(callee.returns, tuple) else callee.returns
            parts = [*e.args, *(k.value for k in e.keywords)]
            if isinstance(e.func, ast.Attribute):
                parts.append(e.func.value)
            return max([self.level(p, f) for p in parts] + [GRADER])
        children = [n for n in ast.iter_child_nodes(e) if isinstance(n, (ast.expr, ast.comprehension))]
        return max([self.level(n, f) for n in children]
                   + ([self.level(e.iter, f)] if isinstance(e, ast.comprehension) else []) + [GRADER])

    @staticmethod
    def _name(call: ast.Call) -> str:
        return call.func.attr if isinstance(call.func, ast.Attribute) else \
            call.func.id if isinstance(call.func, ast.Name) else ""

    def elements(self, value: ast.AST | None, n: int, f: Function) -> list[int]:
        """The levels of the n values `value` unpacks into: element-wise where it can tell."""
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == n:
            return [self.level(v, f) for v in value.elts]
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "zip" \
                and len(value.args) == n:
            return [self.level(a, f) for a in value.args]
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "enumerate" \
                and n == 2:
            return [GRADER, self.level(value.args[0], f)]
        if isinstance(value, ast.Call) and self.textsafe_function(f, value.func) is None:
            callee = self.callee(value, f)
            if callee is not None and isinstance(callee.returns, tuple) and len(callee.returns) == n:
                return list(callee.returns)
        return [self.level(value, f)] * n

    @staticmethod
    def raise_level(f: Function, name: str, level: int) -> bool:
        if level > f.levels.get(name, GRADER):
            f.levels[name] = level
            return True
        return False

    def bind(self, target: ast.AST, value: ast.AST | None, level: int, f: Function, iterated: bool = False) -> bool:
        """Raise the level of the names in `target` (assigned `value`, or each item of it when `iterated`)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            n = len(target.elts)
            zipped = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                and value.func.id in ("zip", "enumerate")
            levels = self.elements(value, n, f) if not iterated or zipped else [level] * n
            return any([self.bind(t, None, lv, f) for t, lv in zip(target.elts, levels)])
        if isinstance(target, ast.Starred):
            return self.bind(target.value, None, level, f)
        if isinstance(target, ast.Name):
            return self.raise_level(f, target.id, level)
        return False

    def analyse(self, f: Function) -> bool:
        """Bind `f`'s names and compute its return level; True when something rose."""
        changed = False
        for node in f.own_nodes():
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    changed |= self.bind(t, node.value, self.level(node.value, f), f)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
                extra = self.level(node.target, f) if isinstance(node, ast.AugAssign) else GRADER
                changed |= self.bind(node.target, None, max(extra, self.level(node.value, f)), f)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                changed |= self.bind(node.target, node.iter, self.level(node.iter, f), f, iterated=True)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                changed |= self.bind(node.optional_vars, None, self.level(node.context_expr, f), f)
            elif isinstance(node, ast.ExceptHandler) and node.name:  # the name means this exception in its body
                level = GRADER if self._grader_exception(node.type) else CHILD
                for n in (n for stmt in node.body for n in ast.walk(stmt)):
                    if isinstance(n, ast.Name) and n.id == node.name:
                        self.handled[id(n)] = level
        returns = [n.value for n in f.own_nodes() if isinstance(n, ast.Return) and n.value is not None]
        if returns and all(isinstance(r, ast.Tuple) for r in returns) and len({len(r.elts) for r in returns}) == 1:
            new: int | tuple = tuple(max(self.level(r.elts[i], f) for r in returns)  # type: ignore[attr-defined]
                                     for i in range(len(returns[0].elts)))  # type: ignore[attr-defined]
        else:
            new = max([self.level(r, f) for r in returns] + [GRADER])
        if new != f.returns:
            f.returns, changed = new, True
        return changed

    @staticmethod
    def _grader_exception(node: ast.AST | None) -> bool:
        names = node.elts if isinstance(node, ast.Tuple) else [node]
        return all((n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", "")) in GRADER_EXCEPTIONS
                   for n in names)

    def pass_arguments(self, f: Function) -> bool:
        """Raise the parameter levels of the functions `f` calls; True when one rose."""
        changed = False
        for call in (n for n in f.own_nodes() if isinstance(n, ast.Call)):
            callee = self.callee(call, f)
            if callee is None:
                continue
            shift = 1 if callee.method and isinstance(call.func, ast.Attribute) else 0
            params, positional = callee.params[shift:], callee.params[shift:callee.positional]
            for i, a in enumerate(call.args):
                spread = isinstance(a, ast.Starred)  # `*xs` may fill every positional parameter from i on
                names = positional[i:] if spread else positional[i:i + 1]
                if callee.vararg and (spread or i >= len(positional)):
                    names = [*names, callee.vararg]
                for p in names:
                    changed |= self.raise_level(callee, p, self.level(a, f))
            for k in call.keywords:
                names = params if k.arg is None else [k.arg] if k.arg in params else \
                    [callee.kwarg] if callee.kwarg else []
                for p in names:
                    changed |= self.raise_level(callee, p, self.level(k.value, f))
        return changed

    def run(self) -> "Analysis":
        for _ in range(50):
            changed = [self.analyse(f) for f in self.every] + [self.pass_arguments(f) for f in self.every]
            if not any(changed):
                return self
        raise AssertionError("the analysis did not settle")

    # -------------------------------------------------- sites
    def sites(self):
        """(function, site, call) for every construction site, with the function whose own code holds it."""
        for f in self.every:
            for call in (n for n in f.own_nodes() if isinstance(n, ast.Call)):
                func = call.func
                if isinstance(func, ast.Name) and func.id in SITES and func.id != "fail":
                    yield f, func.id, call
                elif isinstance(func, ast.Name) and func.id == "cls" and f.name == "failed_call":
                    yield f, "Finding", call
                elif isinstance(func, ast.Attribute) and func.attr in ("fail", "failed_call"):
                    yield f, func.attr, call

    def arguments(self, f: Function, site: str, call: ast.Call) -> list[tuple[str, int, str]]:
        """(parameter, level, source) of each argument of a site (a *call of tuples: element-wise)."""
        names = parameters(site)
        found = []
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Starred):
                levels = self.elements(a.value, len(names) - i, f)
                found += [(p, lv, ast.unparse(a)) for p, lv in zip(names[i:], levels)]
            else:
                found.append((names[i] if i < len(names) else "?", self.level(a, f), ast.unparse(a)))
        return found + [(k.arg or "**", self.level(k.value, f), ast.unparse(k.value)) for k in call.keywords]

    def violations(self) -> list[tuple[str, str]]:
        """(function, what) for every argument the rule refuses."""
        bad = []
        for f, site, call in self.sites():
            for name, lv, text in self.arguments(f, site, call):
                if name in DATA or (f.module, f.name, name) in EXEMPT:
                    continue
                allowed = INPUT if name in WITH_INPUTS else GRADER
                if lv > allowed:
                    what = "child data" if lv == CHILD else "text shown only with the inputs"
                    bad.append((f.name, f"{f.module}:{call.lineno} {site}({name}=...) holds {what}: {text[:100]}"))
        return bad


def judge_sources() -> dict[str, str]:
    """The engine (but its child/, which runs in the child) and the lab's grading/ package: the judge's code."""
    engine = [p for p in sorted(PACKAGE.rglob("*.py")) if "child" not in p.relative_to(PACKAGE).parts]
    return {str(p.relative_to(ROOT)): p.read_text() for p in [*engine, *sorted(GRADING.rglob("*.py"))]}


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    return Analysis(judge_sources()).run()


# ------------------------------------------------------------------ the tests of the rule
def test_every_parameter_of_a_site_is_declared():
    undeclared = {site: sorted(set(parameters(site)) - SHOWN - WITH_INPUTS - DATA) for site in SITES}
    assert not any(undeclared.values()), f"declare these parameters SHOWN, WITH_INPUTS or DATA: {undeclared}"


def test_the_sites_are_found(analysis):
    found = {(f.module, site) for f, site, _ in analysis.sites()}
    for where in [("autograder/checks/tools.py", "fail"), ("autograder/judge/grade.py", "Finding"),
                  ("autograder/sandbox/remote.py", "SubmissionError"), ("autograder/sandbox/sandbox.py",
                                                                        "ChildFailure"),
                  ("autograder/judge/e2e.py", "failed_call"), ("grading/checks/public/rm_loss.py", "fail"),
                  ("autograder/judge/outcome.py", "Finding"), ("grading/checks/hidden/ppo_clip.py", "fail")]:
        assert where in found, where
    assert sum(1 for _ in analysis.sites()) >= 40


def test_child_data_reaches_a_site_only_through_textsafe(analysis):
    """The rule of the module docstring, at every site."""
    bad = analysis.violations()
    assert not bad, "\n".join(text for _, text in bad)


PROBE = '''
import torch
from autograder.sandbox import textsafe
def check(ctx, answer):
    value, grads = ctx.sub.call("f", 1)
    v = value
    raise answer.fail(f"returned a {type(v).__name__}")
def quoted(ctx, answer):
    value, grads = ctx.sub.call("f", 1)
    raise answer.fail(f"returned {textsafe.object_words(value)}", got=textsafe.fmt(value))
def shown_detail(exc):
    return Finding(message=exc.detail)
def detail_with_the_inputs(exc):
    return Finding(message="it raised", submission_text=exc.detail)
def helper(x):
    return x.shape
def through_a_helper(ctx, answer):
    raise answer.fail(f"shape {helper(answer.value)}")
def through_a_parameter(answer):
    tell(answer.value)
def tell(got):
    raise CheckFailed(f"got {got}")
def line(reply):
    err = _error_of(reply)
    raise SubmissionError(f"raised at line {err['line']}", "raised")
def exception_text():
    try:
        pass
    except ValueError as exc:
        raise SubmissionError(f"raised: {exc}", "raised")
def a_closure(ctx):
    value, _ = ctx.sub.call("f")
    def inner():
        raise CheckFailed(f"{value}")
    inner()
def unquoted_got(answer):
    raise answer.fail("wrong", got=str(answer.value))
def through_a_library(ctx):
    value, _ = ctx.sub.call("f")
    raise CheckFailed(f"{torch.where(value > 0, value, 0)}")
def passes_positionally(ctx):
    value, _ = ctx.sub.call("f")
    labelled(1, value)
    spread(1, value)
def labelled(x, *rest, label=""):
    raise CheckFailed(f"{label}")
def spread(x, *rest, label=""):
    raise CheckFailed(f"{rest}")
'''


def test_the_analysis_catches_the_patterns_of_issue_20():
    """The analysis itself, on a probe module: each unquoted pattern is caught, the quoted forms pass."""
    bad = Analysis({"autograder/probe.py": PROBE}).run().violations()
    caught = {name for name, _ in bad}
    assert caught == {"check", "shown_detail", "through_a_helper", "tell", "line", "exception_text", "inner",
                      "unquoted_got", "through_a_library", "spread"}, bad


# ------------------------------------------------------------------ the quoting functions
def test_words_name_only_well_known_types():
    assert textsafe.object_words({"__object__": "HIDDEN-INPUT g=0.0 l=0.0 r=[[0.0]]"}) == "an object of its own class"
    assert textsafe.object_words({"__object__": "HIDDEN_g0_l0"}) == "an object of its own class"
    assert textsafe.object_words({"__object__": "float"}) == "a float" and textsafe.object_words(None) == "None"
    assert textsafe.object_words({"__object__": ["not", "a", "name"]}) == "an object of its own class"
    assert textsafe.exception_words("ValueError") == "ValueError"
    assert textsafe.exception_words("HIDDEN_g0_l0") == textsafe.exception_words("?") == "an exception of its own class"
    assert textsafe.raised_words("RuntimeError", "can't allocate memory") == "raised RuntimeError (out of memory)"
    assert textsafe.dtype_words(torch.float32) == "float32" and textsafe.dtype_words("HIDDEN") == "another dtype"
    names = ("logp", "ref_logp")
    assert textsafe.argument_words(1, names, 2) == "ref_logp" and textsafe.argument_words(2, names, 3) == "number 3"
    assert textsafe.argument_words("beta", names, 2, {"beta": 0.1}) == "beta"
    assert textsafe.argument_words("HIDDEN_g0", names, 2, {"beta": 0.1}) == "one of its arguments"
    assert textsafe.argument_words(7, names, 2) == textsafe.argument_words(True, names, 2) == "one of its arguments"


def test_shape_words_name_only_shapes_made_of_the_inputs_sizes():
    assert textsafe.shape_words((3,), (3, 4)) == "shape (3,)"
    assert textsafe.shape_words((12,), (3, 4)) == "shape (12,)"          # flattened
    assert textsafe.shape_words((4, 3), (3, 4)) == "shape (4, 3)"        # transposed
    assert textsafe.shape_words((12345,), (3, 4)) == "a shape of its own"  # a size that could carry an input
    assert textsafe.shape_words((3, 4, 1), (3, 4)) == "a shape of its own"  # more dimensions than any input
    # the number of nameable shapes stays small: a few bits per test
    dims = [1, 3, 4, 12]
    nameable = {(a,) for a in dims} | {(a, b) for a in dims for b in dims} | {()}
    assert all(textsafe.shape_words(s, (3, 4)).startswith("shape") for s in nameable)
    assert len(nameable) == 21


def test_wire_words_drop_the_numbers_and_quotes_of_the_frame():
    assert textsafe.wire_words("frame of 123456789 bytes of JSON is over the limit") == \
        "frame of N bytes of JSON is over the limit"
    assert textsafe.wire_words("tensor dtype not allowed: {'dtype': 'HIDDEN 1.234'}") == "tensor dtype not allowed"


def test_said_keeps_line_and_message_together():
    assert textsafe.said("bad shape", 12) == "line 12: bad shape"
    assert textsafe.said(None, 12) == "line 12" and textsafe.said("bad", None) == "bad"
    assert textsafe.said("x" * 2000, 3).endswith("more characters cut]")


# ------------------------------------------------------------------ the one gate
def _result(inputs_visibility: str, private: bool = False, **finding) -> TestResult:
    return TestResult("gae.known_values", "GAE", ["gae"], 4, 0, "visible", inputs_visibility,
                      Finding(private_inputs=private, **finding), private_inputs_visibility="after_due_date")


HIDDEN_DIGITS = "0.123456789"
FAILURE = dict(message="advantages differ", inputs=f"rewards=[[{HIDDEN_DIGITS}]]", expected=f"[[{HIDDEN_DIGITS}]]",
               got=f"[[{HIDDEN_DIGITS}]]", submission_text=f"line 1{HIDDEN_DIGITS[2:]}: x",
               compared="expected a float32 tensor of shape (1, 1), got a float32 tensor of shape (1, 1)")


@pytest.mark.parametrize("inputs_visibility, private, shown_now", [
    ("visible", False, True), ("after_due_date", False, False), ("visible", True, False)])
def test_the_gate_decides_inputs_expected_got_and_the_submissions_text(inputs_visibility, private, shown_now):
    t = _result(inputs_visibility, private, **FAILURE)
    assert inputs_shown(t, "visible") is shown_now and inputs_shown(t, None)
    text = outcome.test_text(t, inputs_shown(t, "visible"))
    assert (HIDDEN_DIGITS in text) is shown_now
    assert "advantages differ" in text and ("shape (1, 1)" in text)
    assert t.withheld is not shown_now
    if not shown_now:
        assert t.input_release == "after_due_date"


def test_a_private_input_is_never_released_before_the_tests_own_inputs():
    t = TestResult("gae.x", "x", ["gae"], 1, 0, "visible", "hidden", Finding(private_inputs=True, **FAILURE),
                   private_inputs_visibility="after_due_date")
    assert t.input_release == "hidden"


def test_printed_output_waits_for_a_private_input():
    t = _result("visible", True, message="")
    grade = GradeResult("rlhf.py", [t], partial=False, execution_time=1.0, output="printed")
    assert grade.output_visibility == "after_due_date"
    assert HIDDEN_DIGITS not in "\n".join(summary_lines(grade, student=True))


@pytest.mark.parametrize("child_saw, release", [("visible", "visible"), ("after_published", "after_published"),
                                                ("after_due_date", "after_due_date"), ("hidden", "hidden")])
def test_a_childs_text_waits_for_every_input_it_had_received(child_saw, release):
    """Taint follows the child (issue 28): a public test's failure, said by a child that had received a withheld
    input, is shown no earlier than that input, and so is everything printed in the grade."""
    t = _result("visible", False, **FAILURE)
    t.finding.child_saw = child_saw
    assert t.input_release == release and inputs_shown(t, "visible") is (release == "visible")
    assert t.withheld is (release != "visible")
    grade = GradeResult("rlhf.py", [t], partial=False, execution_time=1.0, output="printed")
    assert grade.output_visibility == release
