"""`grade-all --similarity`: the most similar pairs of submissions, found by copydetect (an optional extra).

    pairs = find_pairs(sources, boilerplate=[STARTER.read_text()])   # [{"a", "b", "similarity_a", ...}]
    write_similarity(out, pairs, sources, keys, len(sources))        # DIR/_similarity/: pairs.json, a page per pair

copydetect (https://github.com/blingenf/copydetect, `pip install -e ".[similarity]"`) tokenizes each
file (names become V/F, strings S, comments go), fingerprints its k-grams by winnowing (k = its
noise threshold, 25 tokens; every match of 25+ tokens is found) and compares every pair; the
starter (the stubs and docstrings every student got) is boilerplate: its k-grams never count. A
pair's similarity is, for each side, the share of that file's fingerprinted tokens found in the other.
For courses grading outside Gradescope (which has its own similarity check). A notebook is compared by its
code cells. This only points staff at pairs to read: it proves nothing by itself.
"""

from __future__ import annotations

import html
import io
import json
from pathlib import Path

from autograder.batch.store import atomic_write
from autograder.filetree import remove_tree

FOLDER = "_similarity"   # a student key never starts with "_" (discover._safe_name)
PAIRS = "pairs.json"
TOP_PAIRS = 10
MAX_BYTES = 1 << 20   # a larger file is not compared (the caller leaves it out)
EXTRA = 'pip install -e ".[similarity]"'


class SimilarityUnavailable(Exception):
    """copydetect is not installed: one sentence saying how to install it."""


def check_available() -> None:
    """Raise SimilarityUnavailable unless copydetect can be imported (checked before any grading)."""
    try:
        import copydetect  # noqa: F401
    except ImportError:
        raise SimilarityUnavailable(f"--similarity needs the optional package copydetect: {EXTRA}") from None


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
                     compared: int) -> None:
    """DIR/_similarity/: pairs.json (what the class report shows, with every student's job key then) and one
    page per pair, both files side by side with the shared code highlighted."""
    folder = out / FOLDER
    if folder.is_dir() and not folder.is_symlink():
        remove_tree(folder)
    listed = []
    for p in pairs:
        page = f"{p['a']}__{p['b']}.html"
        atomic_write(folder / page, _page(p, sources[p["a"]], sources[p["b"]]))
        listed.append({k: v for k, v in p.items() if not k.startswith("slices")} | {"page": f"{FOLDER}/{page}"})
    atomic_write(folder / PAIRS, json.dumps({"pairs": listed, "compared": compared,
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
    import numpy as np
    from copydetect.utils import highlight_overlap
    sides = []
    for side, code in (("a", code_a), ("b", code_b)):
        slices = np.array(pair[f"slices_{side}"], dtype=int).reshape(2, -1)
        marked = highlight_overlap(code, slices, "<mark>", "</mark>", escape_html=True)[0] if slices.size else \
            html.escape(code)
        name = html.escape(pair[side])
        share = 100 * pair[f"similarity_{side}"]
        sides.append(f'<section id="{side}"><h2><a href="../class_report.html#student-{name}">{name}</a>: '
                     f"{share:.0f} % of its code is shared</h2><pre>{marked}</pre></section>")
    title = f"{html.escape(pair['a'])} and {html.escape(pair['b'])}"
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>similarity: " + title +
            "</title><style>body{font-family:system-ui,sans-serif;margin:1rem}main{display:flex;gap:1rem}"
            "section{flex:1;min-width:0}pre{overflow-x:auto;font-size:.8rem;background:#f6f8fa;padding:.5rem}"
            "mark{background:#ffd7d5}</style></head><body><h1>" + title + "</h1><p>Highlighted: code found in "
            "both files (copydetect, the starter's code left out). Similar code is a reason to read both files, "
            "not a verdict.</p><main>" + "".join(sides) + "</main></body></html>\n")
