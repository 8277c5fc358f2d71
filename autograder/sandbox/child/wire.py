"""The wire format between the trusted judge and the sandboxed child: JSON plus raw tensor bytes.

A message is one frame:
    8-byte header  b"AGWF" + big-endian uint32 length of the JSON
    JSON           {"...": ..., "tensors": [{"dtype": "float32", "shape": [2, 3]}, ...]}
    payloads       the raw bytes of each tensor in order (C-contiguous, little-endian)
Inside the JSON a tensor is written {"__tensor__": i}, an index into "tensors".
Nothing is ever pickled: decoding builds tensors from bytes with an allow-listed dtype and a
checked size, so a hostile peer can send wrong numbers but never code.

Decoding is bounded, so that a hostile peer cannot crash or stall the reader either: at most MAX_JSON
bytes of JSON, nested at most MAX_DEPTH deep, holding at most MAX_ITEMS values, integers of at most
MAX_DIGITS digits (strings are bounded by MAX_JSON), at most MAX_TENSORS tensors of at most
MAX_TENSOR_BYTES in all, each referenced once. NaN and Infinity literals are read as floats (this
encoder writes them). Whatever goes wrong in decoding, of any exception type, is a WireError; a channel
that closes or stalls mid-frame is EOFError or TimeoutError. After a WireError the reader is not reused.

A FrameReader owns the reading end of a channel: it reads what is there in one go (a small frame:
one read) and keeps what arrived past a frame for the next one. read_frame reads exactly one frame.

This file is shared by both sides and must import nothing but the standard library and torch. torch
is imported only when a frame holds tensors (a process that never sends one, such as the secrets
preflight, is spared its ~1 s import).
"""

from __future__ import annotations

import json
import math
import os
import select
import struct
import sys
import time

MAGIC = b"AGWF"  # autograder wire frame
HEADER = struct.Struct(">4sI")
ITEMSIZE = {"float32": 4, "float64": 8, "int64": 8, "bool": 1}  # the dtypes allowed, by name
MAX_JSON = 1 << 20          # bytes of JSON in one frame
MAX_TENSOR_BYTES = 1 << 26  # bytes of tensor payload in one frame (64 MiB)
MAX_DEPTH = 32              # lists and dicts nested in one frame (the lab's messages: 6)
MAX_ITEMS = 1 << 17         # values in one frame's JSON (the preflight's questions: ~8,000)
MAX_DIGITS = 40             # digits of one integer (an inode number: 20)
MAX_TENSORS = 1 << 10       # tensors in one frame (the lab's messages: 6)
CHUNK = 1 << 16             # what a FrameReader asks for at least (a pipe's default capacity)
MAX_READ = 1 << 20          # what one read asks for at most
PLAIN = (str, int, float, bool, type(None))  # sent as they are (exact types; subclasses too, checked later)
JSON = json.JSONEncoder(separators=(",", ":"), check_circular=False)  # encode()'s bodies are fresh trees
_DTYPE_NAMES: dict = {}     # torch dtype -> its name in ITEMSIZE, filled at the first tensor sent


class WireError(Exception):
    """A malformed, oversized or truncated frame."""


def encode(message: dict) -> bytes:
    """Serialise a message (JSON-able values and torch tensors, nested in lists/tuples/dicts)."""
    metas: list[dict] = []
    payloads: list[bytes] = []
    torch = sys.modules.get("torch")  # not imported: no value can be a tensor
    if torch is not None and not _DTYPE_NAMES:
        _DTYPE_NAMES.update({getattr(torch, name): name for name in ITEMSIZE})

    def pack(value):
        if type(value) in PLAIN:
            return value
        if torch is not None and isinstance(value, torch.Tensor):
            t = value.detach().cpu().contiguous()
            name = _DTYPE_NAMES.get(t.dtype)
            if name is None:
                t = t.double() if t.is_floating_point() else t.long()
                name = _DTYPE_NAMES[t.dtype]
            metas.append({"dtype": name, "shape": list(t.shape)})
            payloads.append(t.numpy().tobytes())
            return {"__tensor__": len(metas) - 1}
        if isinstance(value, dict):
            return {str(k): v if type(v) in PLAIN else pack(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [v if type(v) in PLAIN else pack(v) for v in value]
        if isinstance(value, PLAIN):
            return value
        raise TypeError(f"cannot send a {type(value).__name__}")

    body = pack(message)
    body["tensors"] = metas
    raw = JSON.encode(body).encode()
    return b"".join([HEADER.pack(MAGIC, len(raw)), raw, *payloads])


class FrameReader:
    """Reads frames from a file descriptor that nothing else reads (blocking or not).

    `exact`: ask for no byte past the frame (for a channel read by others afterwards); otherwise
    it reads what is there, at least CHUNK bytes, and keeps the rest for the next frame.
    """

    def __init__(self, fd: int, exact: bool = False):
        self.fd, self.exact = fd, exact
        self.blocking = os.get_blocking(fd) if fd >= 0 else False
        self.buffer = bytearray()

    @classmethod
    def of_bytes(cls, data: bytes) -> "FrameReader":
        """A reader of frames held in memory (e.g. a file's): EOFError past the last whole one."""
        reader = cls(-1)
        reader.buffer += data
        return reader

    def read(self, deadline: float | None = None) -> dict:
        """Read and decode one frame (TimeoutError after `deadline`, monotonic; EOFError when closed)."""
        self._fill(HEADER.size, deadline)
        magic, length = HEADER.unpack_from(self.buffer)
        if magic != MAGIC:
            raise WireError("bad frame header")
        if length > MAX_JSON:
            raise WireError(f"frame of {length} bytes of JSON is over the limit")
        start = HEADER.size + length
        self._fill(start, deadline)
        body, metas, sizes = _decode_json(bytes(self.buffer[HEADER.size:start]))
        total = sum(sizes)
        self._fill(start + total, deadline)
        try:
            tensors = []
            for meta, size in zip(metas, sizes):
                tensors.append(_tensor(meta, self.buffer[start:start + size]))  # a slice: a copy the tensor owns
                start += size
            message = _unpack(body, tensors)
        except WireError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever the peer's bytes make fail is its malformed frame
            raise WireError(f"unreadable frame: {type(e).__name__}") from None
        del self.buffer[:start]
        return message

    def _fill(self, n: int, deadline: float | None) -> None:
        """Read until the buffer holds at least n bytes."""
        while len(self.buffer) < n:
            if self.fd < 0:
                raise EOFError("the frame is cut short")
            want = n - len(self.buffer)
            if self.blocking and deadline is not None:
                self._wait(deadline)
            try:
                chunk = os.read(self.fd, min(want if self.exact else max(want, CHUNK), MAX_READ))
            except BlockingIOError:
                self._wait(deadline)
                continue
            if not chunk:
                raise EOFError("the other side closed the channel")
            self.buffer += chunk

    def _wait(self, deadline: float | None) -> None:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not select.select([self.fd], [], [], left)[0]:
            raise TimeoutError("the other side did not send a whole frame in time")


def read_frame(fd: int, deadline: float | None = None) -> dict:
    """Read and decode exactly one frame from a file descriptor (TimeoutError after `deadline`, monotonic)."""
    return FrameReader(fd, exact=True).read(deadline)


def _decode_json(raw: bytes) -> tuple[dict, list, list[int]]:
    """A frame's JSON as (body without "tensors", the tensors' metas, their sizes in bytes), within the
    bounds of the module docstring; WireError otherwise, whatever failed."""
    try:
        body = json.loads(raw, parse_int=_bounded_int)
        if type(body) is not dict:
            raise WireError("frame is not a JSON object")
        metas = body.pop("tensors", None)
        if type(metas) is not list:
            raise WireError("frame has no list of tensors")
        if len(metas) > MAX_TENSORS:
            raise WireError(f"frame of {len(metas)} tensors is over the limit")
        sizes = [_nbytes(m) for m in metas]
    except WireError:
        raise
    except Exception as e:  # noqa: BLE001 - RecursionError, MemoryError, ValueError...: the peer's frame
        raise WireError(f"unreadable frame: {type(e).__name__}: {e}") from None
    if sum(sizes) > MAX_TENSOR_BYTES:
        raise WireError(f"tensors of {sum(sizes)} bytes in one message are over the limit")
    return body, metas, sizes


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise WireError(f"integer of {len(text)} digits is over the limit")
    return int(text)


def _nbytes(meta: dict) -> int:
    if type(meta) is not dict or type(meta.get("dtype")) is not str or meta["dtype"] not in ITEMSIZE:
        raise WireError(f"tensor dtype not allowed: {meta!r:.80}")
    shape = meta.get("shape")
    if type(shape) is not list or len(shape) > 8 or not all(type(s) is int and 0 <= s < 1 << 31 for s in shape):
        raise WireError(f"bad tensor shape: {shape!r:.80}")
    return math.prod(shape) * ITEMSIZE[meta["dtype"]]


def _tensor(meta: dict, raw: bytearray):
    import torch
    dtype = getattr(torch, meta["dtype"])
    if not raw:
        return torch.empty(meta["shape"], dtype=dtype)
    return torch.frombuffer(raw, dtype=dtype).reshape(meta["shape"])


def _unpack(body: dict, tensors: list) -> dict:
    """`body` with each {"__tensor__": i} replaced by tensors[i] (each used once), in place and without
    recursion; WireError past MAX_DEPTH or MAX_ITEMS."""
    used: set[int] = set()
    items, todo = 0, [(body, 1)]
    while todo:
        container, depth = todo.pop()
        if depth > MAX_DEPTH:
            raise WireError(f"frame nested deeper than {MAX_DEPTH} is over the limit")
        items += len(container)
        if items > MAX_ITEMS:
            raise WireError(f"frame of more than {MAX_ITEMS} values is over the limit")
        for key, value in list(container.items() if type(container) is dict else enumerate(container)):
            if type(value) is dict and len(value) == 1 and "__tensor__" in value:
                index = value["__tensor__"]
                if type(index) is not int or not 0 <= index < len(tensors) or index in used:
                    raise WireError("bad tensor reference")
                used.add(index)
                container[key] = tensors[index]
            elif type(value) in (dict, list):
                todo.append((value, depth + 1))
    return body


def write_frame(fd: int, message: dict) -> None:
    write_bytes(fd, encode(message))


def write_bytes(fd: int, frame: bytes) -> None:
    """Write an encoded frame whole (blocking)."""
    data = memoryview(frame)
    while data:
        data = data[os.write(fd, data):]
