# Answer the import with a frame nested 600 lists deep, written straight to the channel before the worker's own.
import os as _os
import struct as _struct
import sys as _sys

_body = b'{"ok": true, "deep": ' + b"[" * 600 + b"]" * 600 + b', "tensors": []}'
_os.write(int(_sys.argv[4]), b"AGWF" + _struct.pack(">I", len(_body)) + _body)
