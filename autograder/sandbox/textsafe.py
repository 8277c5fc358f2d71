"""The only functions that turn what the sandboxed child produced into text, and how visible each result may be.

    clean("shapes differ\\x00\\ud800", 200)             ->  "shapes differ"
    object_words({"__object__": "HIDDEN_g0_l0"})      ->  "an object of its own class"
    raised_words("ValueError", "bad shape")            ->  "raised ValueError"
    said("bad shape", 12)                              ->  "line 12: bad shape"
    said("expected ':'", 61, cells)                    ->  "code cell 7, line 3: expected ':'"  (a notebook's)

Child data is anything the child sent or did: a returned value (a tensor, a list, {"__object__": class name},
or whatever a forged frame holds), an exception's class name, message and line, what it printed, its exit
code or signal, the shape and dtype of a tensor it sent. Every sentence that quotes it is built here, by one of
two kinds of function (tests/test_child_text.py checks every construction site of a failure against them):

WORDS  the grader's own words, with at most a few bits of the child's choosing: a well-known type's name (else
       "an object of its own class"), one of torch's dtypes, a shape made of the sizes the grader sent, the name
       of one of the call's arguments. They may stand in a sentence shown with a test's outcome (`visibility`).
TEXT   the child's own text or values, cleaned (no lone surrogates, no control characters but \\n and \\t) and
       capped: shown only with the test's inputs (`inputs_visibility`), since it may carry them.

A leaf module: it imports nothing of the grader, and torch only if it is already loaded.
"""

from __future__ import annotations

import builtins
import itertools
import math
import re
import sys

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")  # C0 (not \t \n), DEL, C1, lone surrogates
MAX_VALUE = 600  # characters of one formatted value

# Types a returned value is named by (the child's class name otherwise never becomes text): Python's own, and
# the numpy and torch types a loss or an advantage computation meets.
KNOWN_TYPES = {
    "NoneType": "None", "int": "an int", "float": "a float", "bool": "a bool", "complex": "a complex number",
    "str": "a str", "bytes": "a bytes object", "list": "a list", "tuple": "a tuple", "dict": "a dict",
    "set": "a set", "frozenset": "a frozenset", "range": "a range", "generator": "a generator",
    "function": "a function", "builtin_function_or_method": "a function", "method": "a method",
    "type": "a class", "module": "a module", "map": "a map object", "zip": "a zip object",
    "ndarray": "a numpy array", "float32": "a numpy float32", "float64": "a numpy float64",
    "int32": "a numpy int32", "int64": "a numpy int64", "bool_": "a numpy bool", "dtype": "a dtype",
    "device": "a torch device", "Size": "a torch.Size", "Generator": "a torch Generator",
}
DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128", "uint8", "int8", "int16",
          "int32", "int64", "bool")  # torch's dtypes, by the name a report gives them


# ------------------------------------------------------------------ WORDS: may be shown with the outcome
def object_words(value: object) -> str:
    """A returned non-tensor named for a sentence: "an int", "None", "a list"... or "an object of its own class".

    `value` is the judge-side value: a plain value, or {"__object__": name} for what the child named (its claim)."""
    if isinstance(value, dict) and "__object__" in value:
        name = value["__object__"]
        return KNOWN_TYPES.get(name, "an object of its own class") if isinstance(name, str) else \
            "an object of its own class"
    return KNOWN_TYPES.get(type(value).__name__, "an object of its own class")


def exception_words(name: object) -> str:
    """An exception class named for a sentence: Python's own by name, any other "an exception of its own class"."""
    if isinstance(name, str) and name:
        known = getattr(builtins, name, None)
        return name if isinstance(known, type) and issubclass(known, BaseException) else \
            "an exception of its own class"
    return "an exception of its own class" if name else "an exception"


def raised_words(name: object, message: object = "") -> str:
    """ "raised ValueError", "raised an exception of its own class", "raised MemoryError (out of memory)"."""
    memory = name == "MemoryError" or (isinstance(message, str) and "can't allocate memory" in message)
    return f"raised {exception_words(name)}" + (" (out of memory)" if memory else "")


def dtype_words(dtype: object) -> str:
    """ "float32" for torch.float32 (or "float32"); "another dtype" for anything that is not one of torch's."""
    name = str(dtype).removeprefix("torch.")
    return name if name in DTYPES else "another dtype"


def shape_words(shape: object, *sizes_from: object) -> str:
    """ "shape (3,)" when `shape` is made of the sizes the grader can name, else "a shape of its own".

    The nameable sizes are 1 and the sizes of the shapes in `sizes_from` (the expected result, the inputs) and their
    products, in at most as many dimensions as the largest of those shapes: (B,), (T, B), (B * T,) for (B, T)
    inputs. Any other shape may be chosen to carry an input (a size of 12345), so it is named only with the inputs.
    """
    known = [tuple(int(s) for s in x) for x in sizes_from]  # type: ignore[attr-defined]
    dims = sorted({s for x in known for s in x if s > 1})[:6]
    products = {1} | {math.prod(c) for r in range(1, len(dims) + 1) for c in itertools.combinations(dims, r)}
    got = _shape(shape)
    if got is not None and len(got) <= max((len(x) for x in known), default=0) and all(s in products for s in got):
        return f"shape {got}"
    return "a shape of its own"


def compared(expected: object, got: object, *sizes_from: object) -> str:
    """What was compared, kind and shape only: "expected a float32 tensor of shape (3, 4), got a float64 tensor of
    shape (3, 4)"; each shape in WORDS given `sizes_from` (the inputs' shapes; see shape_words). The values
    themselves are TEXT: they are computed from the inputs."""
    return f"expected {_kind(expected, sizes_from)}, got {_kind(got, sizes_from)}"


def wire_words(text: str) -> str:
    """The wire's own words for an unreadable frame: what precedes the first colon (what follows it quotes the
    frame), with every number the frame chose written N: "tensors of N bytes in one message are over the limit"."""
    return re.sub(r"\d+", "N", clean(text.split(":", 1)[0], 120))


def argument_words(argument: object, names: tuple[str, ...], positions: int, keywords: object = ()) -> str:
    """The argument of a call the child pointed to (a position, or a keyword), by the grader's own name for it: the
    contract's parameter name for a position below `positions` ("number 3" past `names`), the grader's own key for
    one of the call's `keywords`; "one of its arguments" for anything else."""
    if type(argument) is int and 0 <= argument < positions:
        return names[argument] if argument < len(names) else f"number {argument + 1}"
    own = [k for k in keywords if isinstance(k, str) and k == argument]  # type: ignore[attr-defined]
    return own[0] if own else "one of its arguments"



def measure_words(value: object, threshold: bool = False) -> str:
    """A quantity the judge measured (an e2e test's gold gain, computed by the judge's own world from the trained
    model) as the grader writes it: "0.310", "-1.508" (a `threshold` as written: "0.34"); anything but a finite
    real number: "not a number"."""
    if (isinstance(value, float) or type(value) is int) and math.isfinite(value):
        return f"{value:g}" if threshold else f"{value:.3f}"
    return "not a number"



WORDS = (object_words, exception_words, raised_words, dtype_words, shape_words, compared, wire_words,
         argument_words, measure_words)


# ------------------------------------------------------------------ TEXT: shown only with the inputs
def clean(text: str, limit: int) -> str:
    """`text` without control characters (except \\n and \\t) and lone surrogates, at most ~`limit` chars."""
    if not isinstance(text, str):
        text = str(text)
    text = _UNSAFE.sub("", text.replace("\r\n", "\n"))
    if len(text) <= limit:
        return text
    return text[:limit] + f" [... {len(text) - limit} more characters cut]"


def fmt(x: object, digits: int = 4) -> str:
    """A short, readable rendering of a tensor or a plain value (inputs, expected and got values in reports)."""
    torch = sys.modules.get("torch")  # not imported: no value can be a tensor
    if torch is not None and isinstance(x, torch.Tensor):
        if x.dim() == 0:
            return f"{x.item():.{digits}g}" if x.is_floating_point() else str(x.item())
        body = torch.round(x.double(), decimals=digits).tolist() if x.is_floating_point() else x.tolist()
        text = str(body)
        return text if len(text) <= MAX_VALUE else text[:MAX_VALUE] + " ..."
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    if isinstance(x, dict) and "__object__" in x:
        return object_words(x)
    if isinstance(x, list):
        return clean("[" + ", ".join(fmt(v, digits) for v in x[:16]) + "]", MAX_VALUE)
    return clean(repr(x), MAX_VALUE)


def said(message: object, line: object = None, cells: tuple | None = None) -> str:
    """What the submission's code said when it raised: "line 12: shape mismatch" (either part may be missing).

    `cells`: a notebook's line map (the grader's data, autograder/sandbox/notebook.Converted.cells): the line is then
    told in the notebook's terms, "code cell 7, line 3: ..."."""
    text = clean(message, 500) if isinstance(message, str) else ""
    where = f"line {line}" if type(line) is int else ""
    if type(line) is int and cells is not None and 0 < line <= len(cells) and cells[line - 1]:
        cell, cell_line = cells[line - 1]
        where = f"code cell {cell}, line {cell_line}"
    return f"{where}: {text}" if where and text else where or text


def shape_text(shape: object) -> str:
    """The exact shape of a tensor the child sent: "shape (524288, 1, 1)"."""
    return f"shape {_shape(shape)}"


def nonzero_pattern(values: object, keep: object, atol: float) -> str:
    """Which entries of a (B, T) tensor are nonzero: 1 nonzero, 0 zero, . padding (keep == 0), a word per row."""
    rows = ["".join("." if not k else ("1" if abs(v) > atol else "0") for v, k in zip(vr, kr))
            for vr, kr in zip(values.tolist(), keep.tolist())]  # type: ignore[attr-defined]
    return "nonzero (1) / zero (0) / padding (.): " + " ".join(rows)


TEXT = (clean, fmt, said, shape_text, nonzero_pattern)


# ------------------------------------------------------------------ helpers
def _shape(shape: object) -> tuple[int, ...] | None:
    try:
        return tuple(int(s) for s in shape)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        return None


def _kind(x: object, sizes_from: tuple) -> str:
    """ "a float32 tensor of shape (3, 4)" (its shape in WORDS given `sizes_from`), "a float", "None"."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return f"a {dtype_words(x.dtype)} tensor of {shape_words(x.shape, *sizes_from)}"
    return object_words(x)
