# Print about 200 MB at import (with invalid UTF-8, NULs and terminal escapes): printing costs nothing.
import sys as _sys

_chunk = b"spam \xff\xfe\x00\x1b[2J " * 100_000 + b"\n"
for _ in range(200_000_000 // len(_chunk)):
    _sys.stdout.buffer.write(_chunk)
_sys.stdout.flush()
