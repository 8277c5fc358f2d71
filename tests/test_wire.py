"""autograder/sandbox/child/wire.py: frames round-trip exactly; malformed, oversized or truncated frames are refused."""

from __future__ import annotations

import json
import os
import struct
import sys
import time
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "autograder" / "sandbox" / "child"))
import wire  # noqa: E402


class Pipe:
    """A pipe's two ends (`read, write = pipe`) that closes each end once: a number closed twice may by then be
    another file's (another test's pipe, a child's, pytest's capture)."""

    def __init__(self):
        self.read, self.write = os.pipe()
        self.open = [self.read, self.write]

    def __iter__(self):
        return iter((self.read, self.write))

    def close_write(self) -> None:
        os.close(self.write)
        self.open.remove(self.write)


@pytest.fixture
def pipe():
    ends = Pipe()
    yield ends
    for fd in ends.open:
        os.close(fd)


def test_round_trip_keeps_every_dtype_shape_and_value(pipe):
    read, write = pipe
    message = {"op": "call", "args": [torch.randn(3, 4), torch.arange(5), torch.tensor([True, False]),
                                      torch.randn(2, dtype=torch.float64), torch.empty(0, 3), torch.tensor(1.5), 0.2],
               "kwargs": {"nested": (torch.ones(2, 2), None, "x")}, "grad": [0]}
    wire.write_frame(write, message)
    got = wire.read_frame(read, time.monotonic() + 5)
    for a, b in zip(message["args"][:6], got["args"][:6]):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    assert got["args"][6] == 0.2 and got["grad"] == [0]
    assert torch.equal(got["kwargs"]["nested"][0], torch.ones(2, 2)) and got["kwargs"]["nested"][1:] == [None, "x"]


def test_tensors_of_a_frame_are_independent(pipe):
    read, write = pipe
    wire.write_frame(write, {"a": torch.zeros(3), "b": torch.zeros(3)})
    got = wire.read_frame(read)
    got["a"] += 1
    assert torch.equal(got["b"], torch.zeros(3))


def frame(body: dict, payload: bytes = b"") -> bytes:
    raw = json.dumps(body).encode()
    return wire.MAGIC + struct.pack(">I", len(raw)) + raw + payload


@pytest.mark.parametrize("data, error", [
    (b"XXXX\0\0\0\2{}", wire.WireError),
    (frame({"tensors": [{"dtype": "object", "shape": [1]}]}), wire.WireError),
    (frame({"tensors": [{"dtype": "float32", "shape": [1 << 30]}]}), wire.WireError),
    (frame({"tensors": [{"dtype": "float32", "shape": [-1]}]}), wire.WireError),
    (frame({"x": {"__tensor__": 3}, "tensors": []}), wire.WireError),
    (frame({"tensors": "none"}), wire.WireError),
    (frame({"tensors": [{"dtype": "float32", "shape": [4]}]}, b"\0" * 8), EOFError),  # truncated payload
])
def test_bad_frames_are_refused(pipe, data, error):
    read, write = pipe
    os.write(write, data)
    pipe.close_write()
    with pytest.raises(error):
        wire.read_frame(read)


def test_a_slow_peer_times_out(pipe):
    read, write = pipe
    os.write(write, frame({"tensors": [{"dtype": "float32", "shape": [4]}]}, b"\0" * 8))
    with pytest.raises(TimeoutError):
        wire.read_frame(read, time.monotonic() + 0.2)


def test_unsendable_values_are_refused():
    with pytest.raises(TypeError):
        wire.encode({"x": object()})


def test_a_reader_keeps_what_arrived_past_a_frame(pipe):
    read, write = pipe
    os.write(write, wire.encode({"a": torch.arange(3)}) + wire.encode({"b": 2}))
    reader = wire.FrameReader(read)
    assert torch.equal(reader.read()["a"], torch.arange(3))
    assert reader.buffer  # the second frame came in the same read
    assert reader.read(time.monotonic() + 5) == {"b": 2}


def test_read_frame_takes_no_byte_past_its_frame(pipe):
    read, write = pipe
    os.write(write, wire.encode({"a": 1}) + b"next")
    assert wire.read_frame(read) == {"a": 1}
    assert os.read(read, 100) == b"next"


def test_a_non_blocking_reader_waits_until_its_deadline(pipe):
    read, write = pipe
    os.set_blocking(read, False)
    data = wire.encode({"x": torch.zeros(4)})
    os.write(write, data[:-3])
    reader = wire.FrameReader(read)
    with pytest.raises(TimeoutError):
        reader.read(time.monotonic() + 0.2)
    os.write(write, data[-3:])
    assert torch.equal(reader.read(time.monotonic() + 5)["x"], torch.zeros(4))
