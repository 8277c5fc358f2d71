"""The examples each property check's hypothesis run draws, drawn once and shipped, so that a grade of a
passing submission spends no time in hypothesis (drawing was ~3 s of CPU per grade).

    for_all(ctx, CASES, body)              # what tools.for_all(ctx, CASES, body) finds, without drawing
    for_all(ctx, CASES, body, chosen="f")  # ... then the body on contract function f's chosen examples

Why the finding is the same: hypothesis runs from a fixed seed (tools.for_all), so its draws are a fixed list of
examples. `drawn` gets that list from tools.draws, each distinct example once (hypothesis draws some twice),
with the choice sequences it was drawn from. tools.for_all runs the body on the draws smallest first
(hypothesis's own order of choice sequences, shortlex) and shrinks the first it fails from its choice sequence;
a grade runs the body on a fresh copy of each listed example in the same order and shrinks the first failure
from its shipped choice sequence: the same finding, without drawing. Should the body pass that example when
shrinking starts (a submission whose answers depend on state or randomness), the listed example's failure is
raised, unshrunk: a failure is never lost. Chosen examples run after the draws pass; a failure there is shown as
it is (they are small by construction, and hypothesis cannot shrink what it did not draw).

The chosen examples are checks/lab_inputs.py's: those derived from a function's declared domain (declared.py), then
the lab's (registry.Lab.chosen_examples: its grading/checks/hidden/chosen.py, a pairwise covering array of a
hand-written differential check's factors built with covering.py and chosen.py, or the training's own regime).
The lists are shipped in the lab's grading/checks/hidden/examples.json (a hidden-check file, never in
the student bundle; the lab declares it among its data files: DataFile(DATA_FILE, is_current, write)),
keyed by the check module, the strategy's repr and max_examples (and "chosen <function>", with a declared
function's domain and units, for the chosen examples, deterministic but costly to build), with a fingerprint of what
they depend on (the hypothesis and torch versions, the lab's checks' code, this package's and the declarations'
readers). A stale or missing file costs time
only: the lists are then drawn in the grade, once per strategy and process. `python -m autograder
refresh` rewrites the file; the tests check that it is current and equals a fresh draw.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Sequence

import hypothesis
import torch
from hypothesis import strategies as st

from autograder.checks import Context, tools
from autograder.checks.strategies import Ragged
from autograder.lab import arithmetic, domain_spec, paths, unit_spec
from autograder.lab.fingerprints import code_of, numerics
from autograder.sandbox.remote import FAILED_FOR_GOOD, SubmissionError

# the code the draws and the chosen examples depend on: the lab's checks, this package's, and the declarations' readers
CODE_DIRS = {"lab": paths.GRADING / "checks", "engine": Path(__file__).resolve().parent}
CODE_FILES = {"engine/domain_spec.py": Path(domain_spec.__file__), "engine/unit_spec.py": Path(unit_spec.__file__)}
DATA_FILE = paths.GRADING / "checks" / "hidden" / "examples.json"
DTYPES = {str(d): d for d in (torch.float32, torch.float64, torch.int64, torch.bool)}
DRAWN: dict[str, list] = {}   # key -> the examples drawn in this process (shipped ones excepted)
CHOICES: dict[str, list[list[bytes]]] = {}  # key -> each listed example's choice sequences (shipped or drawn)
SHIPPED: dict[str, list] | None = None  # key -> the shipped examples, once read (see _shipped)
LIVE = False  # True: hypothesis draws in every check, the shipped examples unused (tests compare the two ways)
SHRINK = True  # False: a shipped example's failure is raised as it is, no live run (validate's null submissions:
               # only their scores are judged, and a failure's score does not depend on its shrinking)


def for_all(ctx: Context, strategy: st.SearchStrategy, body: Callable[[Any], None], chosen: str = "") -> None:
    """tools.for_all(ctx, strategy, body) without drawing: the body on the shipped examples, in the same order
    (smallest first), then on each chosen example of the contract function `chosen` (the lab's: inputs hypothesis
    would not draw; shipped too).

    A failure is never lost: the first shipped example the body fails is shrunk from its shipped choice sequence
    (tools.shrink_from), as the live run shrinks it; should the body pass it then (a submission with state or
    randomness answers differently the second time), the failure stands, unshrunk. A chosen example's failure is
    reported as it is."""
    def listed() -> list:
        return examples(ctx, strategy, body.__module__)
    if LIVE:  # the draws are hypothesis's own: listing them would draw them all a second time
        tools.for_all(ctx, strategy, body)
    else:
        ordered, starts = _smallest_first(listed(), CHOICES.get(example_key(body.__module__, strategy,
                                                                            ctx.hypothesis["max_examples"])))
        found = first_failure(ordered, body)
        if found is not None:
            index, failure = found
            if isinstance(failure, SubmissionError) and failure.kind in FAILED_FOR_GOOD:
                raise failure.again()  # what the live run would raise for every input: no input to shrink
            if SHRINK and starts:
                tools.shrink_from(ctx, strategy, body, starts[index])
            elif SHRINK:
                tools.for_all(ctx, strategy, body)  # a list shipped without choices: the live run draws it again
            raise failure
    for example in chosen_examples(chosen, listed) if chosen else ():
        body(copy.deepcopy(example))


def _smallest_first(listed: list, choices: list[list[bytes]] | None) -> tuple[list, list[bytes]]:
    """The examples in tools.for_all's order (each by the smallest choice sequence it was drawn from), and those
    sequences; the list as it is, and no sequences, when it has none (drawn elsewhere)."""
    if choices is None or len(choices) != len(listed):
        return listed, []
    smallest = [min(drawn, key=tools.shortlex) for drawn in choices]
    order = sorted(range(len(listed)), key=lambda i: tools.shortlex(smallest[i]))
    return [listed[i] for i in order], [smallest[i] for i in order]


def first_failure(listed: list, body: Callable[[Any], None]) -> tuple[int, Exception] | None:
    """The index of the first example the body fails (each run on a fresh copy), and what it raised; None when it
    passes them all."""
    for index, example in enumerate(listed):
        try:
            body(copy.deepcopy(example))
        except Exception as exc:  # noqa: BLE001 - a failure (or anything else) is found again by the live run
            return index, exc
    return None


def examples(ctx: Context, strategy: st.SearchStrategy, module: str) -> list:
    """The examples tools.for_all draws for `strategy` while its body passes (shipped, or drawn once)."""
    key = example_key(module, strategy, ctx.hypothesis["max_examples"])
    shipped = _shipped().get(key)
    if shipped is not None:
        return shipped
    if key not in DRAWN:
        DRAWN[key], CHOICES[key] = drawn(ctx, strategy)
    return DRAWN[key]


def chosen_examples(function: str, listed: Callable[[], Sequence] = list) -> list:
    """The lab's chosen examples of `function`, shipped (building the covering arrays costs ~0.5 s of CPU) or
    built once: each distinct one once, none that repeats one of the draws `listed()` (an example of a pure
    function asked again only repeats its answer, and reaches no level its twin does not)."""
    from autograder.checks import lab_inputs

    key = chosen_key(function)
    shipped = _shipped().get(key)
    if shipped is not None:
        return shipped
    if key not in DRAWN:
        seen = {json.dumps(encode(e)) for e in listed()}
        DRAWN[key] = []
        for example in lab_inputs.chosen_inputs(function):
            code = json.dumps(encode(example))
            if code not in seen:
                seen.add(code)
                DRAWN[key].append(example)
    return DRAWN[key]


def chosen_key(function: str) -> str:
    """The shipped file's key of `function`'s chosen examples: "chosen F", then F's declaration where it declares a
    domain (its domain and units), so that a changed declaration builds them anew."""
    from autograder.lab import config
    spec = config.current().contract.get(function)
    return f"chosen {function}" + (f" {spec.domain!r} {spec.units!r}" if spec is not None and spec.domain else "")


def drawn(ctx: Context, strategy: st.SearchStrategy) -> tuple[list, list[list[bytes]]]:
    """The examples tools.for_all draws (tools.draws: same settings, same seed), each once (a repeated example,
    which hypothesis draws from other choices, would only repeat a pure function's answer), in the order drawn,
    and the choice sequences each was drawn from (where tools.shrink_from starts)."""
    distinct: dict[str, tuple[Any, list[bytes]]] = {}
    for example, choices in tools.draws(ctx, strategy):
        distinct.setdefault(json.dumps(encode(example)), (example, []))[1].append(choices)
    return [e for e, _ in distinct.values()], [c for _, c in distinct.values()]


def example_key(module: str, strategy: st.SearchStrategy, max_examples: int) -> str:
    return f"{module} {max_examples} {strategy!r}"


# ---------------------------------------------------------------- the shipped file
def fingerprint() -> str:
    """sha256 of what the draws depend on besides their key: library versions and the checks' code (comments and
    docstrings aside: editing them changes no draw)."""
    h = hashlib.sha256(f"hypothesis {hypothesis.__version__}\n{arithmetic.torch_setup()}\n".encode())
    for name, folder in CODE_DIRS.items():
        for path in sorted(folder.rglob("*.py")):
            h.update(f"{name}/{path.relative_to(folder)}".encode() + b"\0" + code_of(path).encode())
    for name, path in CODE_FILES.items():
        h.update(name.encode() + b"\0" + code_of(path).encode())
    return h.hexdigest()


def is_current(path: Path = DATA_FILE) -> bool:
    """The shipped file matches the checks and the libraries (`python -m autograder refresh` rewrites it)."""
    return bool(read(path))


def _shipped() -> dict[str, list]:
    global SHIPPED
    if SHIPPED is None:
        data = _current(DATA_FILE)  # read and fingerprinted once (the fingerprint costs ~0.1 s of CPU)
        SHIPPED = _examples_in(data)
        CHOICES.update({key: [[base64.b64decode(c) for c in example] for example in listed]
                        for key, listed in data.get("choices", {}).items()})
    return SHIPPED


def read(path: Path) -> dict[str, list]:
    """key -> examples of a current file ({} when it is absent, unreadable or stale)."""
    return _examples_in(_current(path))


def _examples_in(data: dict) -> dict[str, list]:
    return {key: [decode(e) for e in listed] for key, listed in data.get("examples", {}).items()}


def _current(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("fingerprint") == fingerprint() else {}


def recorded_numerics(path: Path = DATA_FILE) -> str:
    """fingerprints.numerics() of the machine that drew the file ("" when unknown): a strategy that computes with
    torch (a log_softmax) draws the same examples bit for bit only on a machine that rounds as that one did."""
    try:
        return str(json.loads(path.read_text()).get("numerics", ""))
    except (OSError, ValueError, AttributeError):
        return ""


def encode(value: Any) -> Any:
    """An example as JSON data: tensors as dtype, shape and base64 bytes; tuples and Ragged tagged."""
    if isinstance(value, torch.Tensor):
        t = value.detach().contiguous()
        return {"tensor": str(t.dtype), "shape": list(t.shape), "bytes": base64.b64encode(t.numpy().tobytes()).decode()}
    if isinstance(value, Ragged):
        return {"ragged": [encode(t) for t in value.tensors], "mask": encode(value.mask)}
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot ship an example holding a {type(value).__name__}")


def decode(data: Any) -> Any:
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "tensor" in data:
        raw = bytearray(base64.b64decode(data["bytes"]))
        dtype = DTYPES[data["tensor"]]
        return (torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)).reshape(data["shape"])
    if "ragged" in data:
        return Ragged([decode(t) for t in data["ragged"]], decode(data["mask"]))
    return tuple(decode(v) for v in data["tuple"])


def write(path: Path = DATA_FILE) -> dict:
    """Draw the examples of every hidden property check at grading.yaml's settings and write them."""
    from autograder import checks
    from autograder.checks.local import local_context
    from autograder.lab.reference import load_reference

    global SHIPPED
    reference = load_reference()
    DRAWN.clear()
    CHOICES.clear()
    SHIPPED = {}  # nothing shipped: every list the checks use is drawn into DRAWN
    try:
        for check in checks.load_all().values():
            if ".checks.hidden." in check.run.__module__ or check.public is False:  # public False: derived hidden
                check.run(local_context(reference, reference))
    finally:
        SHIPPED = None
    data = {"fingerprint": fingerprint(), "numerics": numerics(),  # the draws may round through torch's ops
            "examples": {k: [encode(e) for e in v] for k, v in sorted(DRAWN.items())},
            "choices": {k: [[base64.b64encode(c).decode() for c in e] for e in v] for k, v in sorted(CHOICES.items())}}
    path.parent.mkdir(parents=True, exist_ok=True)  # a lab of declared checks only has no checks/ folder
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    return data
