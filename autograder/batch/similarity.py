"""`grade-all --similarity`: the most similar pairs of submissions, found by copydetect (an optional extra).

    code, why = comparable(text)                      # comments and docstrings removed; why: "" or the reason not
    pairs = find_pairs(sources, boilerplate=[STARTER.read_text()])   # [{"a", "b", "similarity_a", ...}]
    write_similarity(out, pairs, sources, keys, skipped)   # DIR/_similarity/: pairs.json, a page per pair

Every submission is compared with its comments and docstrings removed first (tokenize: a file padded
with a megabyte of comments is the same code), so padding cannot push it past the size limit. A
submission that is not compared is never dropped silently: `skipped` names it and why (nothing to
compare, the starter's stubs, unreadable, over MAX_BYTES of code), in pairs.json and the class report.
copydetect (https://github.com/blingenf/copydetect, `pip install -e ".[similarity]"`) tokenizes each
file (names become V/F, strings S), fingerprints its k-grams by winnowing (k = its noise threshold, 25
tokens; every match of 25+ tokens is found) and compares every pair; the starter (the stubs and
docstrings every student got) is boilerplate: its k-grams never count. A pair's similarity is, for each
side, the share of that file's fingerprinted tokens found in the other. For courses grading outside
Gradescope (which has its own similarity check). A notebook is compared by its code cells. This only
points staff at pairs to read: it proves nothing by itself. Each pair's page is rendered by
autograder/judge/templating.py (HTML-escaped, like every page).
"""

from __future__ import annotations

import io
import json
import tokenize
from pathlib import Path

import jinja2

from autograder.batch.store import atomic_write
from autograder.judge import templating
from autograder.sandbox.filetree import remove_tree

FOLDER = "_similarity"   # a student key never starts with "_" (discover._safe_name)
PAIRS = "pairs.json"
TOP_PAIRS = 10
MAX_BYTES = 1 << 20   # of code, comments and docstrings removed: a larger file is not compared (and is named)
MAX_READ = 64 << 20   # a larger file is not even read for comparison (and is named)
TEMPLATE = "similarity_pair.html.j2"
PAGES = templating.environment(jinja2.FileSystemLoader(Path(__file__).resolve().parent.parent / "templates"))
EXTRA = 'pip install -e ".[similarity]"'


class SimilarityUnavailable(Exception):
    """copydetect is not installed: one sentence saying how to install it."""


def check_available() -> None:
    """Raise SimilarityUnavailable unless copydetect can be imported (checked before any grading)."""
    try:
        import copydetect  # noqa: F401
    except ImportError:
        raise SimilarityUnavailable(f"--similarity needs the optional package copydetect: {EXTRA}") from None


def comparable(code: str) -> tuple[str, str]:
    """(`code` without its comments and docstrings, "") or ("", why it cannot be compared)."""
    if len(code) > MAX_READ:
        return "", f"{len(code) / 2 ** 20:.0f} MiB, too large to read for comparison"
    stripped = strip_comments(code)
    if len(stripped) > MAX_BYTES:
        return "", (f"{len(stripped) / 2 ** 20:.1f} MiB of code once comments and docstrings are removed "
                    f"(the limit is {MAX_BYTES / 2 ** 20:g} MiB)")
    return stripped, ""


def strip_comments(code: str) -> str:
    """`code` without its comments and docstrings (a string alone on its logical line), blank lines folded;
    code that does not tokenize loses its whole-line comments only."""
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    drop: list[tuple[int, int]] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return "".join(line for line in lines if not line.lstrip().startswith("#"))
    following: list[int] = [tokenize.ENDMARKER] * len(tokens)  # the type of the next token that is not a comment
    for i in range(len(tokens) - 2, -1, -1):
        nxt = tokens[i + 1].type
        following[i] = following[i + 1] if nxt in (tokenize.COMMENT, tokenize.NL) else nxt
    line_start = True
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and line_start
                                            and following[i] in (tokenize.NEWLINE, tokenize.ENDMARKER)):
            drop.append((starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1]))
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            line_start = tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    kept, at = [], 0
    for begin, end in drop:
        kept.append(code[at:begin])
        at = end
    kept.append(code[at:])
    return "".join(line for line in "".join(kept).splitlines(keepends=True) if line.strip())


def find_pairs(sources: dict[str, str], boilerplate: list[str], top: int = TOP_PAIRS) -> list[dict]:
    """The `top` most similar pairs of `sources` (student -> code), most similar first, with the copied slices."""
    import numpy as np
    from copydetect import CodeFingerprint, compare_files, defaults

    k, window = defaults.NOISE_THRESHOLD, defaults.GUARANTEE_THRESHOLD - defaults.NOISE_THRESHOLD + 1
    common = np.unique([h for text in boilerplate
                        for h in CodeFingerprint("starter.py", k, 1, fp=io.StringIO(text)).hashes])
    prints = {s: CodeFingerprint(f"{s}.py", k, window, boilerplate=common, fp=io.StringIO(code))
              for s, code in sorted(sources.items())}
    students = list(prints)
    found = []
    for i, a in enumerate(students):
        for b in students[i + 1:]:
            overlap, (sim_a, sim_b), slices = compare_files(prints[a], prints[b])
            if overlap:
                found.append({"a": a, "b": b, "similarity_a": float(sim_a), "similarity_b": float(sim_b),
                              "tokens": int(overlap), "slices_a": slices[0].tolist(), "slices_b": slices[1].tolist()})
    found.sort(key=lambda p: (-max(p["similarity_a"], p["similarity_b"]), -p["tokens"], p["a"], p["b"]))
    return found[:top]


def write_similarity(out: Path, pairs: list[dict], sources: dict[str, str], keys: dict[str, str],
                     skipped: dict[str, str]) -> None:
    """DIR/_similarity/: pairs.json (what the class report shows: the pairs, how many were compared, each
    student not compared and why, every student's job key then) and one page per pair, both files (as
    compared: comments and docstrings removed) side by side with the shared code highlighted."""
    folder = out / FOLDER
    if folder.is_dir() and not folder.is_symlink():
        remove_tree(folder)
    listed = []
    for p in pairs:
        page = f"{p['a']}__{p['b']}.html"
        atomic_write(folder / page, _page(p, sources[p["a"]], sources[p["b"]]))
        listed.append({k: v for k, v in p.items() if not k.startswith("slices")} | {"page": f"{FOLDER}/{page}"})
    atomic_write(folder / PAIRS, json.dumps({"pairs": listed, "compared": len(sources), "skipped": skipped,
                                             "keys": keys}, indent=1, sort_keys=True))


def load_similarity(out: Path, keys: dict[str, str]) -> dict | None:
    """What the last --similarity run found, with `changed`: the students whose submission changed since."""
    try:
        found = json.loads((out / FOLDER / PAIRS).read_text())
    except (OSError, ValueError):
        return None
    then = found.get("keys", {})
    found["changed"] = sorted(s for s in set(then) | set(keys) if then.get(s) != keys.get(s))
    return found


def _page(pair: dict, code_a: str, code_b: str) -> str:
    sides = [{"id": side, "student": pair[side], "share": 100 * pair[f"similarity_{side}"],
              "pieces": pieces(code, pair[f"slices_{side}"])} for side, code in (("a", code_a), ("b", code_b))]
    return PAGES.get_template(TEMPLATE).render(a=pair["a"], b=pair["b"], sides=sides)


def pieces(code: str, slices: list) -> list[tuple[str, bool]]:
    """`code` cut into (text, shared) runs; `slices`: copydetect's [[starts...], [ends...]] character offsets."""
    flat = [int(x) for row in slices for x in (row if isinstance(row, list) else [row])]
    half = len(flat) // 2
    spans = sorted(zip(flat[:half], flat[half:]))
    found, at = [], 0
    for begin, end in spans:
        begin, end = max(begin, at), min(end, len(code))
        if begin >= end:
            continue
        found += [(code[at:begin], False)] if begin > at else []
        found.append((code[begin:end], True))
        at = end
    return found + ([(code[at:], False)] if at < len(code) else [])
