"""A working lab folder from a reference file: what `python -m autograder new-lab DIR --from FILE` writes.

    write_lab(folder, reference_source, file_name)   # -> the files written, relative to `folder`

From the reference (its functions, their type hints and docstrings) it infers each function's domain
(autograder/lab/domain_spec.py) and what it returns, by running it; then it writes three files: grading.yaml (only what
the lab decides: the contract with each function's domain and a worked example whose expected value the reference
computed now), the reference and its starter. Everything else is derived from grading.yaml by the engine
(autograder/checks/derived.py: the public known-values check and the differential check of each function;
autograder/judge/declared_lab.py: the hooks); a lab adds only its bank, e2e tests and property checks.
"""

from __future__ import annotations

import ast
import inspect
import re
import types
from pathlib import Path

import torch

from autograder.checks import contract_tests
from autograder.checks.domains import draw_arguments
from autograder.lab.domain_spec import Parameter
from autograder.lab.starter import strip_solutions

SECTION = re.compile(r"^# =+ Part \w+: ", re.M)
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
DIMS = re.compile(r"^\s*([\w, ]+):\s*\(([\w, ]+)\)( in \{0, 1\})?", re.M)  # "x, mask: (B, T)"
RANGE = re.compile(r"^\s*(\w+):\s*in ([-\d.]+)\.\.([-\d.]+)", re.M)  # "gamma: in 0.8..0.99" in a docstring
TEMPLATE = '''"""A new lab: two functions on tensors (replace them with yours).

    masked_mean(x, mask)  the mean of x where mask is 1 (a 0-d tensor)
    scale(x, factor)      x times factor
"""

import torch


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of x over the entries where mask is 1.
    x, mask: (B, T)
    Returns a 0-d tensor."""
    return (x * mask).sum() / mask.sum()


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """x multiplied by factor.
    x: (B, T)
    Returns a tensor of x's shape."""
    return x * factor
'''


class NewLabError(ValueError):
    """The reference cannot be turned into a lab as it is: one sentence saying what to change."""


def write_lab(folder: Path, source: str, file_name: str) -> list[str]:
    """Write the lab folder for the reference `source` (to be submitted as `file_name`); the files written."""
    if folder.exists() and any(folder.iterdir()):
        raise NewLabError(f"{folder} is not empty: new-lab writes a new folder")
    source = with_markers(source)
    functions = reference_functions(source, file_name)
    contract = {name: describe(name, fn) for name, fn in functions.items()}
    lab = re.sub(r"\W", "_", folder.resolve().name).lstrip("0123456789_") or "lab"
    title = (ast.get_docstring(ast.parse(source)) or lab).splitlines()[0].strip().rstrip(".")
    examples = {name: worked_example(name, fn, contract[name]) for name, fn in functions.items()}
    files = {
        "grading.yaml": grading_yaml(lab, title, file_name, contract, examples),
        f"solutions/{file_name}": source,
        f"assignment/{file_name}": strip_solutions(source),
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return list(files)


def with_markers(source: str) -> str:
    """The reference with one `# ==== Part NAME: title` section per function and its body between solution
    markers, where the author wrote none (each function its own part)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    has_sections = bool(SECTION.search(source))
    for node in reversed([n for n in tree.body if isinstance(n, ast.FunctionDef)]):
        body = node.body[1:] if ast.get_docstring(node) is not None else node.body
        segment = "\n".join(lines[node.lineno - 1:node.end_lineno])
        if body and BEGIN not in segment:
            indent = " " * body[0].col_offset
            lines[body[-1].end_lineno:body[-1].end_lineno] = [f"{indent}{END}"]  # type: ignore[misc]
            lines[body[0].lineno - 1:body[0].lineno - 1] = [f"{indent}{BEGIN}"]
        if not has_sections:
            summary = (ast.get_docstring(node) or node.name).splitlines()[0].rstrip(".")
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines[first - 1:first - 1] = [f"# ==== Part {node.name}: {summary}"]
    return "\n".join(lines) + "\n"


def reference_functions(source: str, file_name: str) -> dict[str, types.FunctionType]:
    """The reference's public top-level functions, in order (the contract), imported from `source`."""
    module = types.ModuleType(Path(file_name).stem)
    exec(compile(source, file_name, "exec"), module.__dict__)  # the instructor's own reference
    names = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    if not names:
        raise NewLabError(f"{file_name} defines no function: a lab grades the functions of its reference")
    return {name: getattr(module, name) for name in names}


def describe(name: str, fn: types.FunctionType) -> dict:
    """The contract entry of one function: part, parameters, domain, returns (and mask), inferred and run."""
    signature = inspect.signature(fn)
    doc = inspect.getdoc(fn) or ""
    dims, binary = {}, set()
    for names, shape, zero_one in DIMS.findall(doc):
        for parameter in (n.strip() for n in names.split(",")):
            dims[parameter] = " ".join(d.strip() for d in shape.split(","))
            binary |= {parameter} if zero_one else set()
    ranges = {parameter: f"{low}..{high}" for parameter, low, high in RANGE.findall(doc)}
    domain = {p.name: _domain(name, p, dims, binary, ranges) for p in signature.parameters.values()}
    params = [Parameter.parse(p, spec) for p, spec in domain.items()]
    args = draw_arguments(params, f"{name}:0")
    for arg, p in zip(args, params):
        if p.kind == "tensor":
            arg.requires_grad_(True)
    out = fn(*args)
    if not isinstance(out, torch.Tensor):
        raise NewLabError(f"{name} returns {type(out).__name__}: new-lab writes checks for functions returning a "
                          "tensor")
    returns = _returns(name, out, params, args)
    grads = torch.autograd.grad(out.sum(), [a for a, p in zip(args, params) if p.kind == "tensor"],
                                allow_unused=True) if out.requires_grad else ()
    tensors = iter(grads)
    differentiable = [p.name for p in params if p.kind == "tensor" and next(tensors, None) is not None]
    entry = {"part": name, "parameters": list(domain), "returns": returns, "domain": domain}
    if differentiable:
        entry["differentiable"] = differentiable
    masks = [p.name for p in params if p.kind == "mask" and (p.name == "mask" or p.name.endswith("_mask"))]
    if masks and returns.startswith("like "):
        entry["mask"] = masks[0]
    return entry


def _domain(function: str, p: inspect.Parameter, dims: dict[str, str], binary: set[str],
            ranges: dict[str, str]) -> str:
    """`tensor DIMS` (a `mask` when named so or documented `in {0, 1}`; `in LO..HI` when documented `NAME: in
    LO..HI`), `float LO..HI` (0.5..4 unless documented so), `int LO..HI` (1..8), `bool`."""
    hint = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
    hint = hint.rpartition(".")[2]
    if hint == "Tensor" or p.name in dims:
        if p.name == "mask" or p.name.endswith("_mask") or p.name in binary:
            return f"mask {dims.get(p.name, 'B T')}"
        return f"tensor {dims.get(p.name, 'B T')}" + (f" in {ranges[p.name]}" if p.name in ranges else "")
    if hint == "bool" or isinstance(p.default, bool):
        return "bool"
    if hint == "float" or isinstance(p.default, float):
        return f"float {ranges.get(p.name, '0.5..4')}"
    if hint == "int" or isinstance(p.default, int):
        return f"int {ranges.get(p.name, '1..8')}"
    raise NewLabError(f"{function}({p.name}): give it a type hint (torch.Tensor, float, int or bool), or declare "
                      "its domain in grading.yaml after new-lab")


def _returns(name: str, out: torch.Tensor, params: list[Parameter], args: tuple) -> str:
    if out.dim() == 0:
        return "scalar"
    for p, arg in zip(params, args):
        if isinstance(arg, torch.Tensor) and tuple(out.shape) == tuple(arg.shape):
            return f"like {p.name}"
    for p, arg in zip(params, args):
        if isinstance(arg, torch.Tensor) and arg.dim() and tuple(out.shape) == (arg.shape[0],):
            return f"rows of {p.name}"
    raise NewLabError(f"{name} returned shape {tuple(out.shape)}: new-lab knows a 0-d tensor, a tensor of an "
                      "argument's shape or one value per row of one")


def grading_yaml(lab: str, title: str, file_name: str, contract: dict, examples: dict[str, str]) -> str:
    lines = [f"# The lab {lab}, written by `python -m autograder new-lab`; every key not here has the engine's default",
             "# (docs/grading-yaml.md). The domains are what the hidden checks draw from; the examples are shown to",
             "# students (the expected values are the reference's): edit both to the contract.",
             f"lab: {lab}", f"title: {_quote(title)}", f"submission: {file_name}", "world: []", "", "contract:"]
    for name, entry in contract.items():
        lines += [f"  {name}:", f"    part: {entry['part']}", f"    parameters: [{', '.join(entry['parameters'])}]",
                  f"    returns: {entry['returns']}"]
        lines += [f"    mask: {entry['mask']}"] if "mask" in entry else []
        lines += [f"    differentiable: [{', '.join(entry['differentiable'])}]"] if "differentiable" in entry else []
        lines += ["    domain:"] + [f"      {p}: {spec}" for p, spec in entry["domain"].items()]
        lines += ["    examples:", f"      - {examples[name]}"]
    lines += ["", "tests:"]
    for name, entry in contract.items():
        part = entry["part"]
        derived = [contract_tests.dtype_test_id(part, name),  # the contract's own tests (checks/contract_tests.py)
                   *(contract_tests.grad_test_id(part, name, p) for p in entry.get("differentiable", []))]
        lines += [f"  {part}.known_values: {{points: 5, inputs_visibility: visible}}",
                  f"  {part}.matches_reference: {{points: {10 - len(derived)}}}"]
        lines += [f"  {test}: {{points: 1}}" for test in derived]
    return "\n".join(lines + ["", "e2e: {}", ""])


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def worked_example(name: str, fn: types.FunctionType, entry: dict) -> str:
    """A worked example as a grading.yaml flow mapping: the parameters' values (tensors as nested lists,
    quarter-rounded) and `expect`, the reference's answer now."""
    args = telling_example(name, fn, [Parameter.parse(p, s) for p, s in entry["domain"].items()])
    expected = fn(*(a.float() if isinstance(a, torch.Tensor) else a for a in args)).detach()
    values = {**{p: _literal(a) for p, a in zip(entry["parameters"], args)}, "expect": _literal(expected)}
    return "{" + ", ".join(f"{k}: {v}" for k, v in values.items()) + "}"


def telling_example(name: str, fn: types.FunctionType, params: list[Parameter]) -> tuple:
    """A worked example (quarter-rounded values) that tells the reference from an input-blind answer: every size at
    least 2, each mask holding 0s and 1s, and the reference's answer unlike zeros, ones and every argument echoed."""
    for seed in range(500):
        args = tuple(torch.round(a * 4) / 4 if isinstance(a, torch.Tensor) and p.kind == "tensor" else a
                     for a, p in zip(draw_arguments(params, f"{name}:shown:{seed}"), params))
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        masks = [a for a, p in zip(args, params) if p.kind == "mask"]
        if any(min(a.shape, default=2) < 2 for a in tensors) or any(m.min() == m.max() for m in masks):
            continue
        out = fn(*args).detach()
        blind = [torch.zeros_like(out), torch.ones_like(out), *(a for a in tensors if a.shape == out.shape)]
        if all(not torch.allclose(out.to(b.dtype), b) for b in blind):
            return args
    raise NewLabError(f"{name}: no drawn example tells its answer from an input-blind one: check its domain")


def _literal(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return repr(_rounded(value.detach().tolist()))
    return repr(value)


def _rounded(value: object) -> object:
    """float32's digits (9 significant), enough for the comparison at float32's tolerance."""
    return [_rounded(v) for v in value] if isinstance(value, list) else float(f"{value:.9g}")
