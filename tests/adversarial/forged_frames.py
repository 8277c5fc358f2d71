# Speak the wire protocol itself: answer compute_gae with malformed frames written straight to the channel.
import os as _os
import struct as _struct
import sys as _sys


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    out = int(_sys.argv[4])
    body = b'{"ok": true, "result": [1, 2], "grads": "x", "tensors": {"a": 1}}'
    _os.write(out, b"AGWF" + _struct.pack(">I", len(body)) + body)
    body = b'{"ok": false, "error": [1, 2, 3], "tensors": []}'
    _os.write(out, b"AGWF" + _struct.pack(">I", len(body)) + body)
    _os.write(out, b"AGWF\x00\x00")  # half a header, then silence
    import time
    time.sleep(3600)
