"""The wire format between the trusted judge and the sandboxed child: JSON plus raw tensor bytes.

A message is one frame:
    8-byte header  b"RLHF" + big-endian uint32 length of the JSON
    JSON           {"...": ..., "tensors": [{"dtype": "float32", "shape": [2, 3]}, ...]}
    payloads       the raw bytes of each tensor in order (C-contiguous, little-endian)
Inside the JSON a tensor is written {"__tensor__": i}, an index into "tensors".
Nothing is ever pickled: decoding builds tensors from bytes with an allow-listed dtype and a
checked size, so a hostile peer can send wrong numbers but never code.

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
ITEMSIZE = {"float32": 4, "float64": 8, "int64": 8, "bool": 1}  # the dtypes allowed, by name
MAX_JSON = 1 << 20          # bytes of JSON in one frame
MAX_TENSOR_BYTES = 1 << 26  # bytes of tensor payload in one frame (64 MiB)


class WireError(Exception):
    """A malformed, oversized or truncated frame."""


def encode(message: dict) -> bytes:
    """Serialise a message (JSON-able values and torch tensors, nested in lists/tuples/dicts)."""
    metas: list[dict] = []
    payloads: list[bytes] = []
    torch = sys.modules.get("torch")  # not imported: no value can be a tensor

    def pack(value):
        if torch is not None and isinstance(value, torch.Tensor):
            t = value.detach().cpu().contiguous()
            if str(t.dtype).removeprefix("torch.") not in ITEMSIZE:
                t = t.double() if t.is_floating_point() else t.long()
            metas.append({"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape)})
            payloads.append(t.numpy().tobytes())
            return {"__tensor__": len(metas) - 1}
        if isinstance(value, dict):
            return {str(k): pack(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [pack(v) for v in value]
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise TypeError(f"cannot send a {type(value).__name__}")

    body = pack(message)
    body["tensors"] = metas
    raw = json.dumps(body).encode()
    return MAGIC + struct.pack(">I", len(raw)) + raw + b"".join(payloads)


def _read_exactly(fd: int, n: int, deadline: float | None = None) -> bytes:
    if n == 0:
        return b""
    chunks, got = [], 0
    while got < n:
        if deadline is not None and not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            raise TimeoutError("the other side did not send a whole frame in time")
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the channel")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, deadline: float | None = None) -> dict:
    """Read and decode one frame from a file descriptor (blocking; TimeoutError after `deadline`, monotonic)."""
    head = _read_exactly(fd, 8, deadline)
    if head[:4] != MAGIC:
        raise WireError("bad frame header")
    (length,) = struct.unpack(">I", head[4:])
    if length > MAX_JSON:
        raise WireError(f"frame of {length} bytes of JSON is over the limit")
    try:
        body = json.loads(_read_exactly(fd, length, deadline))
        metas = body.pop("tensors")
        if not isinstance(metas, list):
            raise TypeError("tensors is not a list")
    except (ValueError, KeyError, AttributeError, TypeError, RecursionError) as e:
        raise WireError(f"unreadable frame: {e}") from None
    sizes = [_nbytes(m) for m in metas]
    if sum(sizes) > MAX_TENSOR_BYTES:
        raise WireError(f"tensors of {sum(sizes)} bytes in one message are over the limit")
    payload = memoryview(_read_exactly(fd, sum(sizes), deadline))  # all tensors in one read
    starts = [0]
    for n in sizes:
        starts.append(starts[-1] + n)
    tensors = [_tensor(m, payload[a:b]) for m, a, b in zip(metas, starts, starts[1:])]
    return _unpack(body, tensors)


def _nbytes(meta: dict) -> int:
    if not isinstance(meta, dict) or meta.get("dtype") not in ITEMSIZE:
        raise WireError(f"tensor dtype not allowed: {meta!r:.80}")
    shape = meta.get("shape")
    if not isinstance(shape, list) or len(shape) > 8 or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 1 << 31 for s in shape):
        raise WireError(f"bad tensor shape: {shape!r:.80}")
    return math.prod(shape) * ITEMSIZE[meta["dtype"]]


def _tensor(meta: dict, raw: memoryview):
    import torch
    dtype = getattr(torch, meta["dtype"])
    if not raw:
        return torch.empty(meta["shape"], dtype=dtype)
    return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(meta["shape"])


def _unpack(value, tensors: list):
    if isinstance(value, dict):
        if set(value) == {"__tensor__"}:
            index = value["__tensor__"]
            if not isinstance(index, int) or not 0 <= index < len(tensors):
                raise WireError("bad tensor reference")
            return tensors[index]
        return {k: _unpack(v, tensors) for k, v in value.items()}
    if isinstance(value, list):
        return [_unpack(v, tensors) for v in value]
    return value


def write_frame(fd: int, message: dict) -> None:
    data = memoryview(encode(message))
    while data:
        data = data[os.write(fd, data):]
