"""The wire format between the trusted judge and the sandboxed child: JSON plus raw tensor bytes.

A message is one frame:
    8-byte header  b"RLHF" + big-endian uint32 length of the JSON
    JSON           {"...": ..., "tensors": [{"dtype": "float32", "shape": [2, 3]}, ...]}
    payloads       the raw bytes of each tensor in order (C-contiguous, little-endian)
Inside the JSON a tensor is written {"__tensor__": i}, an index into "tensors".
Nothing is ever pickled: decoding builds tensors from bytes with an allow-listed dtype and a
checked size, so a hostile peer can send wrong numbers but never code.

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

MAGIC = b"RLHF"
HEADER = struct.Struct(">4sI")
ITEMSIZE = {"float32": 4, "float64": 8, "int64": 8, "bool": 1}  # the dtypes allowed, by name
MAX_JSON = 1 << 20          # bytes of JSON in one frame
MAX_TENSOR_BYTES = 1 << 26  # bytes of tensor payload in one frame (64 MiB)
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
        try:
            body = json.loads(self.buffer[HEADER.size:start])
            metas = body.pop("tensors")
            if type(metas) is not list:
                raise TypeError("tensors is not a list")
        except (ValueError, KeyError, AttributeError, TypeError, RecursionError) as e:
            raise WireError(f"unreadable frame: {e}") from None
        sizes = [_nbytes(m) for m in metas]
        total = sum(sizes)
        if total > MAX_TENSOR_BYTES:
            raise WireError(f"tensors of {total} bytes in one message are over the limit")
        self._fill(start + total, deadline)
        tensors = []
        for meta, size in zip(metas, sizes):
            tensors.append(_tensor(meta, self.buffer[start:start + size]))  # a slice: a copy the tensor owns
            start += size
        del self.buffer[:start]
        return _unpack(body, tensors)

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


def _nbytes(meta: dict) -> int:
    if type(meta) is not dict or meta.get("dtype") not in ITEMSIZE:
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


def _unpack(value, tensors: list):
    if type(value) is dict:
        if len(value) == 1 and "__tensor__" in value:
            index = value["__tensor__"]
            if not isinstance(index, int) or not 0 <= index < len(tensors):
                raise WireError("bad tensor reference")
            return tensors[index]
        return {k: _unpack(v, tensors) for k, v in value.items()}
    if type(value) is list:
        return [_unpack(v, tensors) for v in value]
    return value


def write_frame(fd: int, message: dict) -> None:
    write_bytes(fd, encode(message))


def write_bytes(fd: int, frame: bytes) -> None:
    """Write an encoded frame whole (blocking)."""
    data = memoryview(frame)
    while data:
        data = data[os.write(fd, data):]
