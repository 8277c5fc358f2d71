"""The judge's reader survives any frame: random and adversarial frames, through a pipe and from a real child.

Whatever the bytes, FrameReader.read returns a plain message or raises WireError; EOFError only when the
channel closed mid-frame, TimeoutError only when it stalled. A sandboxed child that answers its import or a
call with such a frame is killed: the import "could not be imported", the call "sent an unreadable answer"
(or a malformed one), and no process of it is left. `pytest tests/test_wire_fuzz.py -s` prints the numbers.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import random
import shutil
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch

from autograder.lab import config
from autograder.sandbox import isolation, sandbox
from autograder.sandbox.remote import RemoteSubmission, SubmissionError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "autograder" / "sandbox" / "child"))
import wire  # noqa: E402

SEED = 20        # the number: every run tries the same frames
RANDOM = 2500    # frames drawn from the generator below, on top of the fixed adversarial ones
ALLOWED = (wire.WireError, EOFError, TimeoutError)


def frame(body: bytes, payload: bytes = b"", length: int | None = None, magic: bytes = wire.MAGIC) -> bytes:
    return magic + struct.pack(">I", len(body) if length is None else length) + body + payload


def nested(n: int, kind: str) -> bytes:
    if kind == "list":
        return b"[" * n + b"]" * n
    if kind == "dict":
        return b'{"a":' * n + b"1" + b"}" * n
    return b'[{"a":' * (n // 2) + b"0" + b"}]" * (n // 2)


def adversarial() -> list[tuple[str, bytes]]:
    """Frames written by hand: deep, wide, huge numbers, non-finite literals, wrong types, bad tensor metas,
    bad references, truncations and garbage headers."""
    cases: list[tuple[str, bytes]] = []

    def message(value: bytes, tensors: bytes = b"[]", payload: bytes = b"") -> bytes:
        return frame(b'{"ok": true, "result": ' + value + b', "grads": [], "tensors": ' + tensors + b"}", payload)

    for n in (33, 600, 1000, 5000, 100_000, 300_000):
        for kind in ("list", "dict", "mixed"):
            body = nested(n, kind)
            if len(body) < wire.MAX_JSON - 100:
                cases.append((f"deep {kind} {n}", message(body)))
    cases += [("wide list", message(b"[" + b"0," * 400_000 + b"0]")),
              ("wide dict", message(b"{" + b",".join(b'"%d":0' % i for i in range(100_000)) + b"}")),
              ("many empty dicts", message(b"[" + b"{}," * 300_000 + b"{}]")),
              ("long string", message(b'"' + b"x" * (wire.MAX_JSON - 100) + b'"'))]
    for number in (b"9" * 41, b"-" + b"9" * 41, b"9" * 5000, b"9" * 500_000, b"1e999999", b"-1e999999",
                   b"1" + b"0" * 300_000 + b".5", b"NaN", b"Infinity", b"-Infinity", b"-0", b"1.", b"01", b"0x10"):
        cases.append((f"number {number[:12]!r}", message(number)))
    for text in (b'"\\ud800"', b'"\\udfff\\ud800"', b'"\xff\xfe\x00"', b'"\\u0000\\u001b[2J"', b'"\\x41"'):
        cases.append((f"string {text[:12]!r}", message(text)))
    for body in (b"[]", b'"tensors"', b"1", b"null", b"true", b'["tensors"]', b"{}", b'{"tensors": "none"}',
                 b'{"tensors": {"a": 1}}', b'{"tensors": 5}', b'{"tensors": [1, 2]}', b'{"tensors": [null]}',
                 b'{"tensors": [], "tensors": 3}', b"\xef\xbb\xbf{}", b"\x00" * 16, b"", b"{" * 10, b'{"a":}'):
        cases.append((f"body {body[:16]!r}", frame(body)))
    metas = [b'{"dtype": %s, "shape": [1]}' % dtype for dtype in (b"[1]", b'{"a": 1}', b"null", b"7", b'"object"')]
    metas += [b'{"dtype": "float32", "shape": %s}' % shape for shape in (
        b'"4"', b"[-1]", b"[true]", b"[1.0]", b"[1,1,1,1,1,1,1,1,1]", b"[2147483647, 2147483647]",
        b"[0, 2147483647, 2147483647, 2147483647]", b"null")]
    metas += [b'{"dtype": "float16", "shape": []}', b'{"dtype": "float32"}', b'{"shape": [1]}', b"[]", b'"float32"']
    for meta in metas:
        cases.append((f"meta {meta[:40]!r}", message(b'{"__tensor__": 0}', b"[" + meta + b"]", b"\0" * 8)))
    one = b'[{"dtype": "float32", "shape": [2]}]'
    for ref in (b"true", b"1.0", b"-1", b"1", b'"0"', b"null", b"[0]", b"99999999999999999999"):
        cases.append((f"ref {ref!r}", message(b'{"__tensor__": ' + ref + b"}", one, b"\0" * 8)))
    cases += [("ref twice", message(b'[{"__tensor__": 0}, {"__tensor__": 0}]', one, b"\0" * 8)),
              ("ref with more keys", message(b'{"__tensor__": 0, "x": 1}', one, b"\0" * 8)),
              ("too many tensors", message(b"0", b"[" + b",".join([b'{"dtype": "bool", "shape": [0]}'] * 2000) + b"]")),
              ("tensors over 64 MiB", message(b"0", b'[{"dtype": "float64", "shape": [8388609]}]')),
              ("payload cut short",
               message(b'{"__tensor__": 0}', b'[{"dtype": "float32", "shape": [1024]}]', b"\0" * 100)),
              ("JSON cut short", frame(b'{"ok": true}', length=100)),
              ("header cut short", wire.MAGIC + b"\0\0"),
              ("nothing", b""),
              ("wrong magic", frame(b"{}", magic=b"RLHG")),
              ("length over the limit", frame(b"{}", length=wire.MAX_JSON + 1)),
              ("length 2**32 - 1", frame(b"{}", length=2**32 - 1)),
              ("length 0", frame(b"")),
              ("HTTP", b"GET / HTTP/1.1\r\nHost: judge\r\n\r\n"),
              ("pickle", b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x94")]
    return cases


def random_value(rng: random.Random, depth: int = 0):
    """A message value as the lab sends them: scalars, strings, tensors, nested lists and dicts."""
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        text = "".join(rng.choice("ab\u00e9\u4e2d\0\n\"\\") for _ in range(rng.randint(0, 20)))
        return rng.choice([None, True, False, rng.randint(-2**62, 2**62), rng.uniform(-1e6, 1e6), float("nan"),
                           float("inf"), text])
    if roll < 0.65:
        dtype = rng.choice([torch.float32, torch.float64, torch.int64, torch.bool])
        shape = [rng.randint(0, 4) for _ in range(rng.randint(0, 3))]
        return (torch.randn(shape, dtype=torch.float64) * 3).to(dtype)
    if roll < 0.85:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {f"k{i}": random_value(rng, depth + 1) for i in range(rng.randint(0, 5))}


NOISE = b'[]{}",:0123456789-eE.tnfalsNI\\u\xff\x00'  # bytes that make JSON almost right


def mutate(rng: random.Random, data: bytes) -> bytes:
    """A valid frame damaged: bytes flipped, inserted or cut, pieces spliced, its header rewritten."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            data[at:at] = bytes(rng.choice(NOISE) for _ in range(rng.randint(1, 8)))
        elif op == 2:
            del data[at:at + rng.randint(1, 16)]
        elif op == 3:
            data = data[:at]
        elif op == 4 and len(data) >= 8:
            data[4:8] = struct.pack(">I", rng.choice([0, 1, len(data) - 8, len(data), rng.randrange(2**32)]))
        else:
            other = rng.randrange(len(data) + 1)
            data[at:at] = data[min(at, other):max(at, other)][:256]
    return bytes(data)


def random_frames(rng: random.Random, n: int) -> list[tuple[str, bytes, dict | None]]:
    """(name, frame, the message it encodes or None): valid frames, damaged frames, random JSON."""
    found = []
    for i in range(n):
        message = {"ok": rng.random() < 0.5, "result": random_value(rng), "grads": [random_value(rng)]}
        data = wire.encode(message)
        kind = rng.random()
        if kind < 0.3:
            found.append((f"valid {i}", data, message))
        elif kind < 0.85:
            found.append((f"damaged {i}", mutate(rng, data), None))
        else:
            body = json.dumps(random_value(rng) if rng.random() < 0.3 else {"tensors": [], "x": random_value(rng)},
                              default=lambda t: {"__tensor__": rng.randrange(-1, 3)}).encode()
            found.append((f"random JSON {i}", frame(body), None))
    return found


def plain(value, depth: int = 0) -> None:
    """A decoded message holds only plain data: what the judge validates next."""
    assert depth <= wire.MAX_DEPTH
    if isinstance(value, torch.Tensor):
        assert value.dtype in (torch.float32, torch.float64, torch.int64, torch.bool) and not value.requires_grad
    elif type(value) is dict:
        for k, v in value.items():
            assert type(k) is str
            plain(v, depth + 1)
    elif type(value) is list:
        for v in value:
            plain(v, depth + 1)
    else:
        assert type(value) in (str, int, float, bool, type(None)), type(value)


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, dict):
        return type(b) is dict and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(b) is list and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return a == b and type(a) is type(b)


def read_through_pipe(data: bytes, rng: random.Random, close: bool, blocking: bool, exact: bool):
    """Write `data` into a pipe in random pieces (a thread: frames outgrow the pipe) and read one frame."""
    read, write = os.pipe()
    os.set_blocking(read, blocking)

    def writer():
        view = memoryview(data)
        try:
            while view:
                piece = rng.randint(1, 1 << rng.randint(0, 17))
                view = view[os.write(write, view[:piece]):]
        except OSError:  # the reader gave up and closed its end
            pass
        if close:
            os.close(write)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        return wire.FrameReader(read, exact=exact).read(time.monotonic() + (5 if close else 0.05))
    finally:
        os.close(read)  # the writer's next write fails (EPIPE): it ends, however long the machine takes to run it
        thread.join()   # a writer outliving this call would write into `write`'s number once closed and reused
        if not close:
            os.close(write)


def outcome(read) -> tuple[str, object]:
    try:
        return "message", read()
    except ALLOWED as exc:
        return type(exc).__name__, exc
    except BaseException as exc:  # noqa: BLE001 - the failure this test exists to find
        return f"ESCAPED {type(exc).__name__}", exc


def test_no_frame_makes_the_reader_raise_anything_but_wire_error():
    rng = random.Random(SEED)
    cases = [(name, data, None) for name, data in adversarial()] + random_frames(rng, RANDOM)
    escaped, slowest, counts = [], (0.0, ""), {}
    started, cpu = time.monotonic(), time.process_time()
    for i, (name, data, message) in enumerate(cases):
        close = i % 50 != 7  # one in 50 stalls instead of closing: TimeoutError, after 0.05 s
        for how in ("bytes", "pipe"):
            t0 = time.monotonic()
            if how == "bytes":
                kind, got = outcome(wire.FrameReader.of_bytes(data).read)
            else:
                kind, got = outcome(functools.partial(read_through_pipe, data, rng, close, blocking=i % 2 == 0,
                                                      exact=i % 3 == 0))
            slowest = max(slowest, (time.monotonic() - t0, f"{name} ({how})"))
            counts[kind] = counts.get(kind, 0) + 1
            if kind.startswith("ESCAPED") or (kind == "TimeoutError" and (how == "bytes" or close)) \
                    or (kind == "EOFError" and how == "pipe" and not close):
                escaped.append((name, how, kind, str(got)[:100]))
            elif kind == "message":
                plain(got)
                if message is not None and not same(message, got):
                    escaped.append((name, how, "round trip differs", ""))
            elif message is not None and close:
                escaped.append((name, how, f"a valid frame raised {kind}", str(got)[:100]))
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu
    print(f"\nwire fuzz: {len(cases)} frames ({len(cases) - RANDOM} adversarial, {RANDOM} random), each from bytes "
          f"and through a pipe: {seconds:.1f} s wall, {cpu:.1f} s CPU; outcomes {counts}; "
          f"slowest {slowest[0] * 1000:.0f} ms ({slowest[1]})")
    assert not escaped, escaped[:10]
    assert set(counts) == {"message", "WireError", "EOFError", "TimeoutError"}, counts  # every path was taken
    assert slowest[0] < 5, slowest


# ------------------------------------------------------------------ the same frames from a real sandboxed child
WRITE = ("import os as _o, sys as _s\n"
         "def _send(data):\n"
         "    view = memoryview(data)\n"
         "    while view:\n"
         "        view = view[_o.write(int(_s.argv[4]), view):]\n")
FRAMES = {  # name -> frame, chosen among the above: each kills one child
    "deep 600": frame(b'{"ok": true, "x": ' + nested(600, "list") + b', "tensors": []}'),
    "deep 100000": frame(b'{"ok": true, "x": ' + nested(100_000, "dict") + b', "tensors": []}'),
    "unhashable dtype": frame(b'{"ok": true, "x": {"__tensor__": 0}, "tensors": [{"dtype": [1], "shape": [1]}]}',
                              b"\0" * 4),
    "ok is a list": frame(b'{"ok": [1], "tensors": []}'),
    "garbage header": b"\x80\x04\x95\x10garbage, then silence",
    "JSON cut short, then exit": frame(b'{"ok": true}', length=100),
}
FAST = ("deep 600", "ok is a list")  # the others (a torch import each, 2-5 s) run with -m slow


def survivors(root: Path) -> list[int]:
    """Live processes whose command line names a folder under `root` (the children's)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if str(root).encode() in f.read() and isolation.alive(int(pid)):
                    found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.fixture
def arena(monkeypatch):
    """Children's folders in a root of their own, so what they leave can be found (in the system's temp
    folder: a child of its own uid must reach it, and pytest's tmp_path is 0700)."""
    root = Path(tempfile.mkdtemp(prefix="autograder-fuzz-"))
    root.chmod(0o755)
    monkeypatch.setattr(sandbox, "CHILD_ROOT", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def limits():
    return dataclasses.replace(config.load().limits, import_seconds=30, call_seconds=5)


def left_behind(arena: Path) -> list:
    return list(arena.iterdir()) + survivors(arena)


@pytest.mark.parametrize("name", [n if n in FAST else pytest.param(n, marks=pytest.mark.slow) for n in FRAMES])
def test_a_child_that_answers_its_import_with_a_bad_frame_is_killed_and_not_importable(tmp_path, arena, limits, name):
    path = tmp_path / "rlhf.py"
    end = "_o._exit(0)" if "exit" in name else "import time\ntime.sleep(60)"
    path.write_text(f"{WRITE}_send({FRAMES[name]!r})\n{end}\n")
    sub = RemoteSubmission(path, limits)
    with pytest.raises(SubmissionError) as failed:
        sub.call("compute_gae", torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2))
    message = str(failed.value)
    assert failed.value.kind == "import" and message.startswith("rlhf.py could not be imported: ")
    expected = {"JSON cut short, then exit": "exited during importing the submission",
                "ok is a list": "malformed answer"}
    assert expected.get(name, "unreadable answer") in message, message  # refused at once: not "did not finish"
    assert not left_behind(arena), "the child outlived its failed import"
    with pytest.raises(SubmissionError, match="could not be imported"):  # no new child for the next call
        sub.call("kl_estimate", torch.zeros(1, 2), torch.zeros(1, 2))
    sub.close()
    assert not left_behind(arena)


def test_a_child_that_answers_calls_with_bad_frames_fails_those_calls(tmp_path, arena, limits):
    """Each bad reply kills the child and fails that function for the grade; the next function gets a new
    child and a good answer."""
    path = tmp_path / "rlhf.py"
    source = WRITE
    for fn, name in (("compute_gae", "deep 600"), ("kl_estimate", "unhashable dtype")):
        source += f"def {fn}(*args, **kwargs):\n    _send({FRAMES[name]!r})\n    return args[0]\n"
    source += "def shaped_rewards(scores, logp, *args, **kwargs):\n    return logp * 0\n"
    path.write_text(source)
    sub = RemoteSubmission(path, limits)
    try:
        for fn, reason in (("compute_gae", "frame nested deeper than"), ("kl_estimate", "tensor dtype not allowed")):
            for _ in range(2):  # the second call fails at once: that function failed for the rest of the grade
                with pytest.raises(SubmissionError, match=f"sent an unreadable answer \\({reason}"):
                    sub.call(fn, torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2))
            assert len(list(arena.iterdir())) == 0 and not survivors(arena)
        value, _ = sub.call("shaped_rewards", torch.zeros(1), torch.ones(1, 2), torch.ones(1, 2))
        assert torch.equal(value, torch.zeros(1, 2))
    finally:
        sub.close()
    assert not left_behind(arena)
