"""The child reads only its allow-list (autograder/sandbox/readable.py), whatever lies beside the interpreter.

Every place below holds an edited copy of the reference (one line added: the content search cannot know it),
each in a form a machine really holds: a `src/` checkout (`pip install -e git+...`), a zipped `.egg`, a
folder named by a `.pth` file, pip's cache (a wheel, and a plain file), a file inside another installed
distribution (pip) and one dropped into an allowed distribution's folder (torch/) that its RECORD does
not list. A stub that tries to read each of them must fail at every level (bubblewrap, or own uid +
Landlock at the Docker level: `.ci/run` runs this file there too, through tests/docker_level.py), while
it can read what a submission needs (torch, numpy, the standard library), and graded it scores as a stub.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from autograder.lab import config
from autograder.lab.paths import REFERENCE, ROOT, STARTER
from autograder.sandbox import isolation, readable, sandbox, secret_files

EDITED = REFERENCE.read_text() + "\n# edited after install\n"
SITE = Path(sysconfig.get_path("purelib"))


def plant(prefix: Path, site: Path) -> dict[str, Path]:
    """The copies, by kind (each a path the stub tries, for a zip the archive), and what to remove after."""
    torch_dir = site / "torch"
    places = {
        "src checkout": prefix / "src" / "lab12-solutions" / "solutions" / "rlhf.py",
        "pth-linked folder": prefix / "linked-by-pth" / "rlhf_ref.py",
        "pip cache file": prefix / ".cache" / "pip" / "http-v2" / "a" / "b" / "rlhf_ref.body",
        "inside another distribution": site / "pip" / "_labref_rlhf.py",
        "inside torch, not in its RECORD": torch_dir / "_labref_rlhf.py",
    }
    for path in places.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(EDITED)
    egg = site / "labref-1.0-py3.11.egg"
    with zipfile.ZipFile(egg, "w") as z:
        z.writestr("labref/rlhf.py", EDITED)
    wheel = prefix / ".cache" / "pip" / "wheels" / "ab" / "cd" / "labref-1.0-py3-none-any.whl"
    wheel.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("labref/rlhf.py", EDITED)
    (site / "zz_labref.pth").write_text(f"{places['pth-linked folder'].parent}\n")
    return {**places, "zipped egg": egg, "pip cache wheel": wheel}


def remove(places: dict[str, Path], prefix: Path, site: Path, made: list[Path]) -> None:
    """Remove the copies, and the folders `made` for them (those that did not exist before)."""
    for folder in (prefix / "src" / "lab12-solutions", prefix / "linked-by-pth", prefix / ".cache" / "pip" / "http-v2",
                   prefix / ".cache" / "pip" / "wheels" / "ab", *made):
        shutil.rmtree(folder, ignore_errors=True)
    for path in (places["inside another distribution"], places["inside torch, not in its RECORD"],
                 places["zipped egg"], site / "zz_labref.pth"):
        path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def planted():
    prefix = Path(sys.prefix)
    if not os.access(SITE, os.W_OK) or not (SITE / "torch").is_dir() or not (SITE / "pip").is_dir():
        pytest.skip("needs a writable venv holding torch and pip")
    made = [p for p in (prefix / "src", prefix / ".cache") if not p.exists()]
    places = plant(prefix, SITE)
    readable.view.cache_clear()
    secret_files._searched.clear()
    try:
        yield places
    finally:
        remove(places, prefix, SITE, made)
        readable.view.cache_clear()
        secret_files._searched.clear()


NEEDED = {"torch": lambda: Path(__import__("torch").__file__), "numpy": lambda: Path(__import__("numpy").__file__),
          "stdlib": lambda: Path(os.__file__)}


def others_reach(path: Path) -> bool:
    """Whether another uid may open `path` by its modes (pyenv under a 0700 /root is not: a host's own matter)."""
    return all(p.stat().st_mode & 0o001 for p in path.parents) and bool(path.stat().st_mode & 0o004)


def needed(iso: isolation.Isolation) -> set[str]:
    """The controls the child must read: all of NEEDED, but what its own uid cannot reach by the modes; and
    "import": a distribution of the allow-list that torch's import does not load (networkx), imported once
    confined (Python lists its package folder: Landlock's `listed` rule), when the standard library is reached."""
    kinds = {k for k, f in NEEDED.items() if not iso.own_uid or iso.bwrap or others_reach(f())}
    return kinds | {"import"} if "stdlib" in kinds else kinds


def stub(places: dict[str, Path]) -> str:
    """The starter, plus: read every planted copy; adopt the first one read (then it would score as the reference);
    `readable_paths()` raises with what it could read."""
    targets = {**{k: str(p) for k, p in places.items()}, **{k: str(f()) for k, f in NEEDED.items()}}
    return STARTER.read_text() + f'''

import zipfile as _zipfile

_READ = []
for _kind, _path in {targets!r}.items():
    try:
        if _path.endswith((".egg", ".whl")):
            with _zipfile.ZipFile(_path) as _z:
                _text = _z.read("labref/rlhf.py").decode()
        else:
            with open(_path, "rb") as _f:
                _text = _f.read().decode(errors="replace")
    except OSError:
        continue
    _READ.append(_kind)
    if "edited after install" in _text:
        exec(compile(_text, "adopted", "exec"), globals())

try:
    import networkx as _networkx  # noqa: F401
    _READ.append("import")
except ImportError:
    pass


def readable_paths():
    raise RuntimeError("READ:" + ",".join(sorted(_READ)))
'''


def what_the_child_reads(tmp_path: Path, places: dict[str, Path], iso: isolation.Isolation) -> set[str]:
    (tmp_path / "rlhf.py").write_text(stub(places))
    child = sandbox.Child(tmp_path / "rlhf.py", config.load().limits, iso)
    try:
        assert child.hello == {"ok": True}, child.hello
        reply = child.request({"op": "call", "fn": "readable_paths", "args": [], "kwargs": {}}, timeout=60,
                              what="readable_paths()")
    finally:
        child.kill()
    message = reply["error"]["message"]
    assert message.startswith("READ:"), reply
    return set(filter(None, message[len("READ:"):].split(",")))


def test_the_judge_sees_every_planted_copy_and_the_view_none(planted):
    """The control (each copy is there, readable by an unconfined process) and the rule itself."""
    view = readable.view()
    for kind, path in planted.items():
        assert path.is_file(), kind
        assert not view.readable(path), kind
    for kind, needed in NEEDED.items():
        assert view.readable(needed()), kind
    assert not view.readable(SITE / "zz_labref.pth") and not view.readable(ROOT / "solutions")


@pytest.mark.skipif(not isolation.detect().bwrap and not isolation.detect().landlock,
                    reason="no bubblewrap and no Landlock: grades are refused here (test_no_rule_no_grade)")
def test_a_stub_reads_no_copy_beside_the_interpreter(planted, tmp_path):
    """At the level detected here (bubblewrap, or own uid + Landlock at the Docker level)."""
    read = what_the_child_reads(tmp_path, planted, isolation.detect())
    assert read == needed(isolation.detect()), read


@pytest.mark.skipif(not isolation.detect().landlock, reason="needs Landlock")
def test_landlock_alone_keeps_to_the_allow_list(planted, tmp_path):
    """Landlock's rules from the same allow-list, without bubblewrap (the Docker level's read rule)."""
    iso = isolation.Isolation(own_uid=isolation.detect().own_uid, seccomp=isolation.detect().seccomp,
                              landlock=isolation.detect().landlock)
    read = what_the_child_reads(tmp_path, planted, iso)
    assert read == needed(iso), read


def test_everything_the_child_runtime_loads_is_in_the_view():
    """The allow-list holds what the worker really loads: every module file of torch, numpy and the wire's use of
    them (site-packages on the path as the child has it, without the judge's own .pth files)."""
    script = (f"import sys, json; sys.path.append({str(SITE)!r}); import torch, numpy; torch.zeros(2).numpy(); "
              "print(json.dumps(sorted({m.__file__ for m in list(sys.modules.values()) "
              "if getattr(m, '__file__', None)})))")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, check=True)
    loaded = [Path(f) for f in json.loads(done.stdout) if os.path.isabs(f)]
    view = readable.view()
    assert len(loaded) > 100 and not [f for f in loaded if not view.readable(f)]


def test_the_files_read_from_record_are_the_files_importlib_lists():
    """readable.listed_names reads RECORD itself (no PackagePath per file): for every distribution installed here,
    the same files, once resolved against its folder, as importlib.metadata's `files`."""
    seen = 0
    for dist in importlib.metadata.distributions():
        base = str(dist.locate_file(""))
        names, files = readable.listed_names(dist), dist.files
        assert (names is None) == (files is None), dist.metadata["Name"]
        if files is not None:
            assert ({os.path.normpath(os.path.join(base, n)) for n in names or ()}
                    == {os.path.normpath(os.path.join(base, str(f))) for f in files}), dist.metadata["Name"]
            seen += 1
    assert seen > 20


def test_no_rule_no_grade(monkeypatch):
    """Neither bubblewrap nor Landlock: the preflight refuses with one sentence (grade exits 2)."""
    from autograder.sandbox import preflight
    bare = isolation.Isolation(own_uid=True, seccomp=isolation.detect().seccomp)
    with pytest.raises(preflight.SecretsVisible, match="^without bubblewrap or Landlock nothing limits what a "
                                                       "submission reads"):
        preflight.ensure_secrets_hidden(config.load().limits, [], bare)


@pytest.mark.slow
@pytest.mark.skipif(not isolation.detect().bwrap and not isolation.detect().landlock, reason="grades refused here")
def test_the_stub_grades_as_a_stub(planted, tmp_path):
    """`grade --only gae`: the reference's gae would earn the part's points; the stub earns none."""
    (tmp_path / "rlhf.py").write_text(stub(planted))
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "rlhf.py"), "--out",
                           str(tmp_path / "out"), "--only", "gae"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["tests"] and results["score"] == 0, [(t["name"], t["score"]) for t in results["tests"]]
