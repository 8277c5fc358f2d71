"""grading.yaml, read into typed settings. Every key is declared once, here, with its type, default and meaning.

    cfg = config.load()        # ConfigError("grading.yaml:93: limits.memroy_mb: unknown key (known: ...)")
    cfg.tests["gae.known_values"].points, cfg.limits.memory_mb, cfg.hypothesis.max_examples
    cfg.e2e["kl_penalty"]["ppo"]   # an e2e test's own settings are read by key (see E2ESpec)

Torch-free and grader-free (it imports only yaml): commands, the batch coordinator and the release
pipeline all read grading.yaml through `load()`. docs/grading-yaml.md documents every key declared here;
tests/test_config.py checks that the two agree.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from autograder.lab.domain_spec import Parameter, row_shared, unit_width
from autograder.lab.lab_folder import GRADING_YAML
from autograder.lab.unit_spec import UnitFactor, parse_factor
from autograder.lab.unit_spec import names as unit_names

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")  # Gradescope's, least visible first


def least_visible(*visibilities: str) -> str:
    """The latest release of `visibilities` (one of VISIBILITIES each): what waits for all of them."""
    return min(visibilities, key=VISIBILITIES.index)


class ConfigError(Exception):
    """grading.yaml is missing a key, has an unknown one or a wrong value; the message names file and line."""


def doc(text: str, default: Any = dataclasses.MISSING) -> Any:
    """A declared key: its meaning (shown in errors and checked against docs/grading-yaml.md) and default."""
    if isinstance(default, dict):  # a fresh empty mapping per instance
        return field(default_factory=dict, metadata={"doc": text})
    return field(default=default, metadata={"doc": text})


class Section(Mapping):
    """A typed section that can also be read by key (`spec["seed"]`, `{**spec}`), as the e2e measures do."""

    def __getitem__(self, key: str) -> Any:
        if key in self._keys():
            return getattr(self, key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def _keys(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self)]  # type: ignore[arg-type]


@dataclass(frozen=True)
class Hypothesis(Section):
    max_examples: int = doc("generated inputs per property test, before shrinking (derandomised)", 40)
    rtol: float = doc("relative tolerance of comparisons at float64 inputs", 1e-5)
    atol: float = doc("absolute tolerance of comparisons at float64 inputs", 1e-6)
    rtol_float32: float = doc("relative tolerance at float32 inputs", 1e-4)
    atol_float32: float = doc("absolute tolerance at float32 inputs", 1e-5)
    shrink_examples: int = doc("shrinking a failure of a property test stops after this many more examples...", 200)
    shrink_seconds: float = doc("...or this much more CPU time (judge and child): the failure found last is reported",
                                 10.0)


@dataclass(frozen=True)
class TestSpec:
    id: str
    points: float = doc("points of the test (all or nothing)")
    visibility: str = doc("when students see the test's outcome: name, score, message, hint (Gradescope "
                          "visibility); default: default_visibility", "")
    inputs_visibility: str = doc("when students see the test's failing input and the submission's own error "
                                 "text (never before `visibility`); default: default_inputs_visibility", "")
    private_inputs_visibility: str = ""  # not a key: default_inputs_visibility, for an input other than the shown one


@dataclass(frozen=True)
class E2ESpec(Section):
    """One end-to-end test: the keys every test has, plus its own settings (declared by its registration)."""

    points: float = doc("points of the test (all or nothing)")
    parts: tuple[str, ...] = doc("the parts whose submission functions the test trains with")
    seed: int = doc("seeds the rankings, the PPO run and (offset by 10000) the evaluation prompts")
    visibility: str = doc("as for tests", "")
    inputs_visibility: str = doc("as for tests", "")
    settings: Mapping[str, Any] = field(default_factory=dict)  # the test's own keys (thresholds, sizes)

    def _keys(self) -> list[str]:
        return ["points", "parts", "seed", "visibility", "inputs_visibility", *self.settings]

    def __getitem__(self, key: str) -> Any:
        return self.settings[key] if key in self.settings else super().__getitem__(key)


@dataclass(frozen=True)
class Calibration(Section):
    seeds: int = doc("reference seeds per end-to-end test in a full calibration", 50)
    min_margin_std: float = doc("the worst reference seed must sit this many std inside each threshold", 3.0)
    min_margin: float = doc("...and at least this much in absolute terms", 0.05)
    replay_rtol: float = doc("a grade reuses a shipped training of the reference when each answer of the "
                             "submission to its calls is this close to the reference's (autograder/replay/)", 1e-5)
    replay_atol: float = doc("...relative (replay_rtol) and absolute tolerance; both 0: equal bit for bit", 1e-6)


@dataclass(frozen=True)
class Limits:
    """Resource limits of the sandboxed child (and grade_seconds / grade_wall_seconds, of a whole grade)."""

    call_seconds: float = doc("CPU time the child may spend on one call of a student function", 20.0)
    import_seconds: float = doc("CPU time the child may spend importing the submission (torch's import included)",
                                 60.0)
    wall_per_cpu: float = doc("a call's (and the import's) wall-clock backstop, as a multiple of its CPU limit: "
                              "for code that waits or sleeps", 6.0)
    grade_seconds: float = doc("the whole grade's CPU budget (every judge lane and sandboxed child): tests not "
                               "started once it is spent fail with a message, running calls are cut to what is "
                               "left", 300.0)
    grade_wall_seconds: float = doc("the whole grade's wall-clock backstop, below the platform's own limit "
                                    "(Gradescope's default: 10 minutes)", 540.0)
    memory_mb: int = doc("memory of the child, every kind counted (cgroup where allowed, else polled)", 2048)
    processes: int = doc("processes and threads the child may add", 64)
    output_bytes: int = doc("what the submission prints, kept for the report (the rest is counted, dropped)", 65536)
    file_bytes: int = doc("largest file the child may write, and largest submission", 16 << 20)
    open_files: int = doc("open file descriptors of the child", 256)
    cpu_seconds: float = doc("CPU time of one child process, all its calls together", 600.0)
    address_space_mb: int = doc("address-space backstop (torch reserves far more than it uses)", 8192)
    tmp_mb: int = doc("size of the child's private /tmp and /dev/shm", 64)


@dataclass(frozen=True)
class UnitFactorSpec:
    expression: str = doc("arithmetic (+ - * /, |x|, log(x), exp(x), numbers) of the parameters of the unit's size "
                          "(each unit's entry) and the settings: the factor's value in one unit")
    set_by: str = doc("the parameter of the unit's size the engine sets to put a unit at a level (the expression "
                      "is linear in it, never inside log or exp; not in an earlier factor's expression)")
    levels: tuple[str, ...] = doc("the levels, each a condition on the factor named as itself, |itself| or "
                                  "|itself - E| against arithmetic of the settings (`-15 <= z < -1e-3`, `z = 0`, "
                                  "`|h - 1 / (2 * beta)| <= 1e-3`); a unit is at the first its value meets")


@dataclass(frozen=True)
class ContractUnits:
    along: str = doc("the size letter of the domain whose indices are the units (one pair of answers), or two letters "
                     "`B T`: a unit is one position of the `tensor B T` parameters where the mask is 1 (a generated "
                     "token), a `tensor B` its row's entry")
    factors: dict[str, UnitFactorSpec] = doc("per-unit factors by name, each set in this order "
                                             "(autograder/lab/unit_spec.py)")


@dataclass(frozen=True)
class ContractFunction:
    """One contract function, as grading.yaml `contract` declares it."""

    part: str = doc("the part whose tests grade it")
    parameters: tuple[str, ...] = doc("its parameters in order (the reference's signature)")
    returns: str = doc('"scalar", "like ARG" (a tensor of the shape of argument ARG) or "rows of ARG" (one value per '
                       'row of ARG: shape (ARG.shape[0],)), several joined by ", "')
    mask: str = doc("the parameter marking where a per-token output is padding: answers are compared where it "
                    "is 1", "")
    domain: dict[str, str] = doc("its valid inputs, one entry per parameter (`tensor B T`, `tensor B T in -40..0`, "
                                 "`mask B T`, `prefix-mask B T`, `float 0.5..4`, `int 1..8`, `bool`, `choice A B`, "
                                 "`choice 0.1 1 10` (numbers); autograder/checks/domains.py): "
                                 "what generated checks draw from", {})
    units: ContractUnits | None = doc("per-unit factors of its domain (each pair's margin): their levels are "
                                      "reached in pairs by the derived check's chosen examples, each unit set to "
                                      "its levels (autograder/checks/units.py)", None)
    differentiable: tuple[str, ...] = doc("the parameters the training differentiates through (a single-tensor "
                                          "output only): each gets a derived gradient test", ())
    examples: tuple[dict[str, Any], ...] = doc("worked examples, each a value per parameter (a tensor as a nested "
                                               "list) and `expect`, the answer computed by hand (optional `why`: what "
                                               "a wrong answer is told; `expect_grad`: a scalar answer's gradient to "
                                               "named tensor parameters; `dtype`: float32, the default, or float64): "
                                               "the derived public check PART.known_values "
                                               "(autograder/checks/derived.py)", ())

    def shapes(self, args: tuple) -> Any:
        """The shape(s) it must return for these positional arguments: () per scalar, ARG's shape per "like ARG",
        (ARG.shape[0],) per "rows of ARG"."""
        shapes = tuple(_shape(item, self.parameters, args) for item in (x.strip() for x in self.returns.split(",")))
        return shapes if len(shapes) > 1 else shapes[0]

    @property
    def mask_index(self) -> int | None:
        return self.parameters.index(self.mask) if self.mask else None


def _returned_argument(item: str) -> str | None:
    """The argument a `returns` item is shaped by ("like ARG", "rows of ARG"), None for "scalar"."""
    for prefix in ("like ", "rows of "):
        if item.startswith(prefix):
            return item[len(prefix):]
    return None


def _shape(item: str, parameters: tuple[str, ...], args: tuple) -> tuple[int, ...]:
    argument = _returned_argument(item)
    if argument is None:
        return ()
    shape = tuple(args[parameters.index(argument)].shape)
    return shape[:1] if item.startswith("rows of ") else shape


@dataclass(frozen=True)
class LeaderboardColumn:
    name: str = doc("the column's title on Gradescope's leaderboard")
    test: str = doc("the e2e test that measures it (e2e.NAME)")
    metric: str = doc("the measurement's key in that test's metrics")
    order: str = doc("asc or desc: how Gradescope sorts the column", "desc")


@dataclass(frozen=True)
class Batch:
    job_seconds: float = doc("grade-all: a worker still grading one submission after this long is stopped", 1500.0)


@dataclass(frozen=True)
class FeedbackPolicy:
    """Against using the grader as an oracle (autograder/judge/feedback_policy.py): Gradescope's submission history."""

    max_detailed: int = doc("detailed feedbacks on hidden tests a student gets per rolling window; beyond, the "
                            "score and the visible tests only (the score always counts); 0: no limit", 0)
    window_hours: float = doc("the rolling window, in hours, over the submission times Gradescope records", 24.0)


@dataclass(frozen=True, kw_only=True)
class Config:
    lab: str = doc("the lab's name, a Python identifier: its grading package's module name, nbgrader's "
                   "assignment name")
    title: str = doc("the lab's title, atop every report")
    submission: str = doc("the file students submit (a notebook defining the same functions is accepted)")
    world: tuple[str, ...] = doc("the given world's files (copied beside every submission, each under its own "
                                 "name): a file of assignment/, or a path from the lab's folder to another lab's file "
                                 "(`../other_lab/assignment/model.py`: one copy of a shared world)")
    contract: dict[str, ContractFunction] = doc("the functions students write, in the starter's order: name -> part, "
                                        "parameters, returns, mask, differentiable")
    default_visibility: str = doc("visibility of tests that set none: hidden, after_due_date, "
                                  "after_published or visible", "visible")
    default_inputs_visibility: str = doc("inputs_visibility of tests that set none", "after_due_date")
    hypothesis: Hypothesis = doc("property tests", Hypothesis())
    tests: dict[str, TestSpec] = doc("unit and property tests: id -> points and visibility")
    e2e: dict[str, E2ESpec] = doc("end-to-end tests: name -> points, parts, seed and the test's own settings")
    calibration: Calibration = doc("policy of `python -m autograder calibrate`", Calibration())
    limits: Limits = doc("limits of the sandboxed child and of a whole grade", Limits())
    batch: Batch = doc("grade-all", Batch())
    leaderboard: bool = doc("write Gradescope leaderboard entries (`leaderboard_columns`) into results.json",
                            False)
    leaderboard_columns: tuple[LeaderboardColumn, ...] = doc("the leaderboard's columns: e2e measurements", ())
    feedback_policy: FeedbackPolicy = doc("at most `max_detailed` detailed feedbacks on hidden tests per "
                                          "`window_hours` (Gradescope); off by default", FeedbackPolicy())
    source: str = "grading.yaml"   # where it was read from (for messages)
    lines: Mapping[str, int] = field(default_factory=dict, repr=False)  # "limits.memory_mb" -> line

    @property
    def grade_seconds(self) -> float:
        return self.limits.grade_seconds

    @property
    def functions(self) -> tuple[str, ...]:
        """Every contract function, in the contract's order."""
        return tuple(self.contract)

    @property
    def parts(self) -> dict[str, list[str]]:
        """part -> the contract functions it grades, in the contract's order."""
        parts: dict[str, list[str]] = {}
        for name, fn in self.contract.items():
            parts.setdefault(fn.part, []).append(name)
        return parts

    def where(self, key: str) -> str:
        """"grading.yaml:57" for a dotted key (the nearest enclosing key that has a line)."""
        while key and key not in self.lines:
            key = key.rpartition(".")[0]
        return f"{self.source}:{self.lines[key]}" if key else self.source


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: the same nodes and marks, ~10x less CPU


@functools.lru_cache(maxsize=None)
def current() -> Config:
    """The lab's grading.yaml as read once in this process: for the facts no grade changes (its contract, the
    submission's name, its world); a grade's own settings come from the Config it is given."""
    return load()


def load(path: Path = GRADING_YAML) -> Config:
    """Read and check grading.yaml; raises ConfigError naming the file and line of the first problem."""
    path = Path(path)
    source = shown_path(path)
    try:
        text = path.read_text()
        lines = _key_lines(yaml.compose(text, Loader=_LOADER))
        raw = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (libyaml's when built with it)
    except OSError as exc:
        raise ConfigError(f"{source}: cannot be read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise ConfigError(f"{source}{where}: not valid YAML ({problem})") from None
    reader = _Reader(source, lines)
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping of sections")
    cfg = reader.build(Config, {k: v for k, v in raw.items() if k not in ("tests", "e2e")}, "",
                       skip=("tests", "e2e", "source", "lines"), fixed={"tests": {}, "e2e": {}})
    tests = {tid: reader.build(TestSpec, spec, f"tests.{tid}", skip=("id", "private_inputs_visibility"),
                               fixed={"id": tid})
             for tid, spec in reader.mapping(raw.get("tests"), "tests").items()}
    e2e = {name: reader.e2e(name, spec) for name, spec in reader.mapping(raw.get("e2e"), "e2e").items()}
    cfg = dataclasses.replace(cfg, e2e=e2e, source=source, lines=lines,
                              tests={**tests, **{f"e2e.{n}": _e2e_test_spec(n, s) for n, s in e2e.items()}})
    _check_contract(cfg, reader)
    if cfg.feedback_policy.max_detailed < 0:
        raise reader.error("feedback_policy.max_detailed", "must be 0 (no limit) or more")
    if cfg.feedback_policy.window_hours <= 0:
        raise reader.error("feedback_policy.window_hours", "must be a positive number of hours")
    return _resolve_visibility(cfg, reader)


def _check_expect_grad(reader: "_Reader", name: str, fn: ContractFunction, i: int, grads: Any) -> None:
    """A worked example's `expect_grad`: a map of the function's parameters (of a scalar answer)."""
    if grads is None:
        return
    where = f"contract.{name}.examples"
    if not isinstance(grads, dict) or not grads:
        raise reader.error(where, f"example {i + 1}: expect_grad: a map parameter -> its gradient (a nested list)")
    if fn.returns != "scalar":
        raise reader.error(where, f"example {i + 1}: expect_grad: a gradient is checked for a scalar answer only")
    unknown = sorted(set(grads) - set(fn.parameters))
    if unknown:
        raise reader.error(where, f"example {i + 1}: expect_grad: {', '.join(unknown)} is not a parameter")


def _check_units(reader: "_Reader", name: str, fn: ContractFunction) -> None:
    """`units`: a size letter of the declared domain, factors that read (unit_spec), each set after those it uses."""
    where = f"contract.{name}.units"
    assert fn.units is not None
    params = [Parameter.parse(p, fn.domain[p]) for p in fn.parameters] if fn.domain else []
    along = fn.units.along
    if len(along.split()) not in (1, 2) or not all(letter.isidentifier() for letter in along.split()):
        raise reader.error(f"{where}.along", f"{along!r}: a size letter (`P`: a unit is one index of it) or two "
                           "(`B T`: a unit is one position where the mask is 1)")
    entries = tuple(p.name for p in params if unit_width(p, along) is not None)
    if not entries:
        kinds = f"`tensor {along}` (one entry per unit: a position where the mask is 1)" if " " in along else \
            f"`tensor {along}` (one entry per unit) or `tensor {along}*K` (a group of K)"
        raise reader.error(f"{where}.along", f"{along!r}: declare a domain with parameters {kinds}")
    shared = tuple(p.name for p in params if row_shared(p, along))
    groups = tuple(p.name for p in params if unit_width(p, along))
    settings = tuple(p.name for p in params if p.kind in ("float", "int", "bool", "choice"))
    earlier: list[UnitFactor] = []
    for factor, spec in fn.units.factors.items():
        try:
            parsed = parse_factor(factor, spec.expression, spec.set_by, spec.levels, (*entries, *shared), settings,
                                  groups, shared)
        except ValueError as exc:
            raise reader.error(f"{where}.factors.{factor}", str(exc)) from None
        used = next((e.name for e in earlier if spec.set_by in unit_names(e.expression)), None)
        if used:
            raise reader.error(f"{where}.factors.{factor}.set_by", f"{spec.set_by!r} is in {used}'s expression, set "
                               f"before: set {factor} by another parameter, or declare it first")
        earlier.append(parsed)
    if not fn.units.factors:
        raise reader.error(f"{where}.factors", "declare at least one factor")


def _check_contract(cfg: Config, reader: "_Reader") -> None:
    """Each function's `returns` and `mask` name its parameters; each leaderboard column, an e2e test."""
    if not cfg.lab.isidentifier():
        raise reader.error("lab", f"must be a Python identifier (got {cfg.lab!r})")
    for name, fn in cfg.contract.items():
        for item in (x.strip() for x in fn.returns.split(",")):
            if item != "scalar" and _returned_argument(item) not in fn.parameters:
                raise reader.error(f"contract.{name}.returns", f'"{item}": expected "scalar", "like PARAMETER" or '
                                   f'"rows of PARAMETER" (parameters: {", ".join(fn.parameters)})')
        if fn.mask and fn.mask not in fn.parameters:
            raise reader.error(f"contract.{name}.mask", f"{fn.mask!r} is not one of its parameters")
        if fn.domain and set(fn.domain) != set(fn.parameters):
            raise reader.error(f"contract.{name}.domain", f"declare every parameter once ({', '.join(fn.parameters)})")
        for parameter, spec in fn.domain.items():
            try:
                Parameter.parse(parameter, spec)
            except ValueError as exc:
                raise reader.error(f"contract.{name}.domain.{parameter}", str(exc)) from None
        if fn.units is not None:
            _check_units(reader, name, fn)
        for wrt in fn.differentiable:
            if wrt not in fn.parameters:
                raise reader.error(f"contract.{name}.differentiable", f"{wrt!r} is not one of its parameters")
        for i, example in enumerate(fn.examples):
            missing = [p for p in (*fn.parameters, "expect") if p not in example]
            unknown = sorted(set(example) - {*fn.parameters, "expect", "why", "expect_grad", "dtype"})
            if missing or unknown:
                raise reader.error(f"contract.{name}.examples", f"example {i + 1}: "
                                   + (f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}")
                                   + f" (give each of {', '.join(fn.parameters)}, and expect)")
            _check_expect_grad(reader, name, fn, i, example.get("expect_grad"))
            if example.get("dtype", "float32") not in ("float32", "float64"):
                raise reader.error(f"contract.{name}.examples", f"example {i + 1}: dtype: float32 or float64")
        if fn.differentiable and "," in fn.returns:
            raise reader.error(f"contract.{name}.differentiable", "a gradient is checked for a single-tensor output "
                               "only (this function returns several)")
    for i, column in enumerate(cfg.leaderboard_columns):
        if column.test not in cfg.tests or not column.test.startswith("e2e."):
            raise reader.error("leaderboard_columns", f"column {i + 1}: {column.test!r} is not an e2e test here")
        if column.order not in ("asc", "desc"):
            raise reader.error("leaderboard_columns", f"column {i + 1}: order must be asc or desc")


def _e2e_test_spec(name: str, spec: E2ESpec) -> TestSpec:
    return TestSpec(f"e2e.{name}", float(spec.points), spec.visibility, spec.inputs_visibility)


def _resolve_visibility(cfg: Config, reader: "_Reader") -> Config:
    """Fill in defaults; an input is never shown before its test's outcome, and an input other than the test's
    shown one (outcome.Finding.private_inputs) never before default_inputs_visibility."""
    for key in ("default_visibility", "default_inputs_visibility"):
        reader.visibility(getattr(cfg, key), key)
    tests = {}
    for tid, spec in cfg.tests.items():
        key = f"e2e.{tid[4:]}" if tid.startswith("e2e.") else f"tests.{tid}"
        outcome = reader.visibility(spec.visibility or cfg.default_visibility, f"{key}.visibility")
        inputs = reader.visibility(spec.inputs_visibility or cfg.default_inputs_visibility,
                                   f"{key}.inputs_visibility")
        inputs = least_visible(inputs, outcome)
        private = least_visible(inputs, cfg.default_inputs_visibility)
        if spec.points < 0:
            raise reader.error(f"{key}.points", "must be a non-negative number")
        tests[tid] = dataclasses.replace(spec, visibility=outcome, inputs_visibility=inputs,
                                         private_inputs_visibility=private)
    e2e = {n: dataclasses.replace(s, visibility=tests[f"e2e.{n}"].visibility,
                                  inputs_visibility=tests[f"e2e.{n}"].inputs_visibility) for n, s in cfg.e2e.items()}
    return dataclasses.replace(cfg, tests=tests, e2e=e2e)


def shown_path(path: Path) -> str:
    """A path as an author would type it: relative to the working folder when inside it (`grading.yaml`)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def _key_lines(node: yaml.Node | None, prefix: str = "") -> dict[str, int]:
    """Dotted key -> 1-based line, for every key of nested mappings."""
    found: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = f"{prefix}{key.value}"
            found[name] = key.start_mark.line + 1
            found.update(_key_lines(value, name + "."))
    return found


class _Reader:
    """Builds declared dataclasses from YAML values, with file:line in every error."""

    def __init__(self, source: str, lines: dict[str, int]):
        self.source, self.lines = source, lines

    def error(self, key: str, problem: str) -> ConfigError:
        where = key
        while where and where not in self.lines:
            where = where.rpartition(".")[0]
        line = f":{self.lines[where]}" if where else ""
        return ConfigError(f"{self.source}{line}: {key}: {problem}")

    def mapping(self, value: Any, key: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(key, "expected a mapping")
        return value

    def visibility(self, value: Any, key: str) -> str:
        if value not in VISIBILITIES:
            raise self.error(key, f"must be one of {', '.join(VISIBILITIES)} (got {value!r})")
        return value

    def build(self, cls: type, value: Any, key: str, skip: tuple[str, ...] = (), fixed: dict | None = None):
        """cls(**value) with every key declared, typed and present (or defaulted)."""
        data = self.mapping(value, key or "grading.yaml")
        hints = typing.get_type_hints(cls)
        declared = [f for f in dataclasses.fields(cls) if f.name not in skip]
        unknown = sorted(set(data) - {f.name for f in declared} - set(skip))
        if unknown:
            known = ", ".join(f.name for f in declared)
            raise self.error(_join(key, unknown[0]), f"unknown key (known: {known})")
        kwargs = dict(fixed or {})
        for f in declared:
            name = _join(key, f.name)
            if f.name in data:
                kwargs[f.name] = self.convert(hints[f.name], data[f.name], name)
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise self.error(key or name, f"missing key {f.name!r} ({f.metadata.get('doc', '')})")
        return cls(**kwargs)

    def e2e(self, name: str, value: Any) -> E2ESpec:
        data = self.mapping(value, f"e2e.{name}")
        common = {f.name for f in dataclasses.fields(E2ESpec)} - {"settings"}
        spec = self.build(E2ESpec, {k: v for k, v in data.items() if k in common}, f"e2e.{name}", skip=("settings",))
        return dataclasses.replace(spec, settings={k: v for k, v in data.items() if k not in common})

    def convert(self, kind: Any, value: Any, key: str) -> Any:
        origin, args = typing.get_origin(kind), typing.get_args(kind)
        if kind is Any:  # data the key's own check reads (a worked example's values)
            return value
        if origin in (typing.Union, types.UnionType) and type(None) in args:  # an optional key: X | None
            return None if value is None else self.convert(next(a for a in args if a is not type(None)), value, key)
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            return self.build(kind, value, key)
        if origin is dict:
            return {k: self.convert(args[1], v, _join(key, k)) for k, v in self.mapping(value, key).items()}
        if origin in (list, tuple):
            if not isinstance(value, list):
                raise self.error(key, f"expected a list (got {value!r})")
            items = [self.convert(args[0], v, key) for v in value]
            return items if origin is list else tuple(items)
        if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if kind is int and isinstance(value, int) and not isinstance(value, bool):
            return value
        if kind in (str, bool) and isinstance(value, kind):
            return value
        raise self.error(key, f"expected {getattr(kind, '__name__', kind)} (got {value!r})")


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def declared_keys() -> dict[str, str]:
    """Every declared key ("limits.memory_mb") and its meaning: what docs/grading-yaml.md must document."""
    keys: dict[str, str] = {}

    def walk(cls: type, prefix: str) -> None:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if "doc" not in f.metadata:
                continue
            keys[_join(prefix, f.name)] = f.metadata["doc"]
            if dataclasses.is_dataclass(hints[f.name]):
                walk(hints[f.name], _join(prefix, f.name))

    walk(Config, "")
    walk(TestSpec, "tests.*")
    walk(E2ESpec, "e2e.*")
    return keys
