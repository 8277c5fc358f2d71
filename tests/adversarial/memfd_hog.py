# Hold memory the PSS poll cannot see: a memfd file (os.memfd_create), or a memfd_secret area.
import ctypes as _ctypes
import os as _os

try:
    _fd = _os.memfd_create("hog")
    for _i in range(160):  # 2.5 GiB in 16 MiB writes, never mapped
        _os.write(_fd, b"\1" * (16 << 20))
    print("MEMFD held 2.5 GiB")
except OSError as _exc:
    print("MEMFD refused errno", _exc.errno)
_libc = _ctypes.CDLL(None, use_errno=True)
print("SECRET", "refused errno %d" % _ctypes.get_errno() if _libc.syscall(447, 0) < 0 else "made")
