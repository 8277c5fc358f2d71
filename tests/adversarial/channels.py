# Pass a bit from one child to another (at once, or to a later grade's): send() sets it in every channel,
# receive() looks for it. Used by tests/test_sandbox_channels.py (not graded by test_sandbox_adversarial.py);
# __MARK__ is a unique name. Each probe compares what it sees for the marked name with what it sees for a
# name nobody made, so an error code that differs is a bit too.
import ctypes as _ct
import fcntl as _fcntl
import json as _json
import os as _os
import platform as _platform
import signal as _signal
import socket as _socket
import struct as _struct
import zlib as _zlib

_MARK = "__MARK__"
_NONE = "N" + _MARK[1:]  # the same length: a socket path is limited to 107 bytes
_libc = _ct.CDLL(None, use_errno=True)
_libc.syscall.restype = _ct.c_long
_NR = {"x86_64": {"mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243,
                  "add_key": 248, "keyctl": 250, "inotify_init1": 294, "inotify_add_watch": 254},
       "aarch64": {"mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183,
                   "add_key": 217, "keyctl": 219, "inotify_init1": 26, "inotify_add_watch": 27}}[_platform.machine()]
_KEYS = {name: (_zlib.crc32(name.encode()) & 0x3FFFFFFF) | 1 for name in (_MARK, _NONE)}  # System V keys
_HELD = []              # what the sender keeps open while it lives: sockets, locked files
_SIGNALS = []           # signals this process received
_WATCH = []             # this process's inotify descriptor, when it has one
_USER_KEYRING, _KEYCTL_SEARCH, _KEYCTL_INVALIDATE = -4, 10, 21
_O_CREAT, _O_RDWR, _O_NONBLOCK = 0o100, 0o2, 0o4000


def _call(fn, *args):
    """The result of a libc call, or "errno N"."""
    _ct.set_errno(0)
    result = fn(*args)
    return f"errno {_ct.get_errno()}" if result == -1 else result


def _sys(name, *args):
    return _call(_libc.syscall, _ct.c_long(_NR[name]), *args)


def _outcome(action):
    try:
        result = action()
        return "ok" if result is None else str(result)
    except OSError as exc:
        return f"errno {exc.errno}" if exc.errno is not None else type(exc).__name__
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def _report(word, channel, detail):
    print(f"{word} {channel}: {detail}"[:300], flush=True)


def _on_signal(signum, frame):
    _SIGNALS.append(signum)


_signal.signal(_signal.SIGUSR1, _on_signal)


def _watch(path):
    """Start an inotify watch on `path` (at import: the receiver's, before any sender runs)."""
    fd = _sys("inotify_init1", _ct.c_int(_os.O_NONBLOCK))
    if isinstance(fd, int):
        if isinstance(_sys("inotify_add_watch", _ct.c_int(fd), _ct.c_char_p(path.encode()), _ct.c_uint32(0x20 | 0x1)),
                      int):
            _WATCH.append(fd)
    return fd


def _dirs(own_tmp):
    """(label, folder): the shared temp folders and the sender's own tmp."""
    return [("/tmp", "/tmp"), ("/var/tmp", "/var/tmp"), ("/dev/shm", "/dev/shm"), ("the sender's tmp", own_tmp)]


def send(args_json):
    """Set the bit in every channel (and keep what must stay open); print SENT lines."""
    args = _json.loads(args_json)
    args["own_tmp"] = _os.environ.get("TMPDIR", "/tmp")
    name = _MARK.encode()
    mq = _sys("mq_open", _ct.c_char_p(name), _ct.c_int(_O_CREAT | _O_RDWR), _ct.c_int(0o666), None)
    if isinstance(mq, int):
        mq = _sys("mq_timedsend", _ct.c_int(mq), _ct.c_char_p(b"1"), _ct.c_size_t(1), _ct.c_uint(0), None)
    _report("SENT", "posix mqueue", mq)
    key = _KEYS[_MARK]
    _report("SENT", "sysv msg", _call(_libc.msgget, _ct.c_int(key), _ct.c_int(0o1666)))
    _report("SENT", "sysv shm", _call(_libc.shmget, _ct.c_int(key), _ct.c_size_t(4096), _ct.c_int(0o1666)))
    _report("SENT", "sysv sem", _call(_libc.semget, _ct.c_int(key), _ct.c_int(1), _ct.c_int(0o1666)))

    def listen(address):
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        _HELD.append(s)
        s.bind(address)
        s.listen(4)
    _report("SENT", "abstract socket", _outcome(lambda: listen("\0" + _MARK)))
    for label, folder in _dirs(args["own_tmp"]):
        base = _os.path.join(folder, _MARK)
        _report("SENT", f"socket in {label}", _outcome(lambda b=base: listen(b + ".sock")))
        _report("SENT", f"file in {label}", _outcome(lambda b=base: open(b, "w").write("1")))
        _report("SENT", f"fifo in {label}", _outcome(lambda b=base: _os.mkfifo(b + ".fifo", 0o666)))
    _report("SENT", "signal", _outcome(lambda: _os.kill(args["peer_pid"], _signal.SIGUSR1)))
    _report("SENT", "process name", _outcome(lambda: _libc.prctl(15, _ct.c_char_p(name[:15]), 0, 0, 0)))
    shared = _os.open(args["shared"], _os.O_RDONLY)
    _HELD.append(shared)
    _report("SENT", "flock", _outcome(lambda: _fcntl.flock(shared, _fcntl.LOCK_EX | _fcntl.LOCK_NB)))
    _report("SENT", "posix lock", _outcome(lambda: _fcntl.lockf(shared, _fcntl.LOCK_SH | _fcntl.LOCK_NB)))
    _report("SENT", "file read (inotify)", _outcome(lambda: _os.read(shared, 1) and None))
    _report("SENT", "file read (atime)", _outcome(lambda: open(args["atime_file"], "rb").read(1) and None))
    _report("SENT", "keyring", _sys("add_key", _ct.c_char_p(b"user"), _ct.c_char_p(name), _ct.c_char_p(b"1"),
                                    _ct.c_size_t(1), _ct.c_int(_USER_KEYRING)))
    _report("SENT", "nice", _outcome(lambda: _os.setpriority(_os.PRIO_PROCESS, 0, 7)))
    _report("SENT", "cpu affinity", _outcome(lambda: _os.sched_setaffinity(0, {0})))
    print("DONE send", _os.getpid(), args["own_tmp"], flush=True)


def _differs(channel, marked, absent):
    """Report whether the marked name looks different from an absent one (a bit crossed)."""
    seen, control = _outcome(marked), _outcome(absent)
    _report("GOT" if seen != control else "NOT", channel, f"{seen} (absent name: {control})")


def _text(path):
    with open(path, errors="replace") as f:
        return f.read()


def _pids():
    try:
        return [p for p in _os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []


def receive(args_json):
    """Look for the bit in every channel; print GOT (it crossed) or NOT lines."""
    args = _json.loads(args_json)
    events = _outcome(lambda: len(_os.read(_WATCH[0], 4096))) if _WATCH else "no watch"  # before it opens a file
    _report("GOT" if events.isdigit() else "NOT", "inotify", f"{events} bytes of events")

    def mq(name):
        fd = _sys("mq_open", _ct.c_char_p(name.encode()), _ct.c_int(_O_NONBLOCK), _ct.c_int(0), None)
        if isinstance(fd, str):
            return fd
        buffer = _ct.create_string_buffer(8192)
        got = _sys("mq_timedreceive", _ct.c_int(fd), buffer, _ct.c_size_t(8192), None, None)
        return f"opened, read {got}"
    _differs("posix mqueue", lambda: mq(_MARK), lambda: mq(_NONE))
    try:
        mounts = [line.split()[4] for line in _text("/proc/self/mountinfo").splitlines() if " - mqueue " in line]
    except OSError:
        mounts = ["/dev/mqueue"]
    _differs("posix mqueue listed", lambda: [m for m in mounts if _MARK in _outcome(lambda m=m: _os.listdir(m))],
             lambda: [m for m in mounts if _NONE in _outcome(lambda m=m: _os.listdir(m))])
    for kind, get in (("msg", lambda k: _call(_libc.msgget, _ct.c_int(k), _ct.c_int(0))),
                      ("shm", lambda k: _call(_libc.shmget, _ct.c_int(k), _ct.c_size_t(0), _ct.c_int(0))),
                      ("sem", lambda k: _call(_libc.semget, _ct.c_int(k), _ct.c_int(0), _ct.c_int(0)))):
        _differs(f"sysv {kind}", lambda get=get: get(_KEYS[_MARK]), lambda get=get: get(_KEYS[_NONE]))
        _differs(f"sysv {kind} listed", lambda kind=kind: str(_KEYS[_MARK]) in _text(f"/proc/sysvipc/{kind}"),
                 lambda kind=kind: str(_KEYS[_NONE]) in _text(f"/proc/sysvipc/{kind}"))

    def connect(address):
        with _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM) as s:
            s.settimeout(1)
            s.connect(address)
    _differs("abstract socket", lambda: connect("\0" + _MARK), lambda: connect("\0" + _NONE))
    for listing in ("/proc/net/unix", "/proc/self/net/unix"):
        _differs(f"abstract socket in {listing}", lambda listing=listing: _MARK in _text(listing),
                 lambda listing=listing: _NONE in _text(listing))
    for label, folder in _dirs(args["sender_tmp"]):
        marked, absent = _os.path.join(folder, _MARK), _os.path.join(folder, _NONE)
        _differs(f"socket in {label}", lambda m=marked: connect(m + ".sock"), lambda a=absent: connect(a + ".sock"))
        _differs(f"file in {label}", lambda m=marked: _text(m), lambda a=absent: _text(a))
        _differs(f"fifo in {label}", lambda m=marked: _os.stat(m + ".fifo").st_mode,
                 lambda a=absent: _os.stat(a + ".fifo").st_mode)
    _report("GOT" if _SIGNALS else "NOT", "signal", f"received {_SIGNALS}")
    names = []
    for pid in set(_pids() + [str(args["sender_pid"])]) - {str(_os.getpid())}:
        for part in ("comm", "status"):  # the name the sender gave itself (prctl PR_SET_NAME)
            seen = _outcome(lambda path=f"/proc/{pid}/{part}": _text(path))
            if _MARK[:15] in seen:
                names.append(f"/proc/{pid}/{part}")
    _report("GOT" if names else "NOT", "process name", f"{names[:3]} of {len(_pids())} pids listed")
    shared, other = _os.open(args["shared"], _os.O_RDONLY), _os.open(args["unshared"], _os.O_RDONLY)

    def flock(fd):
        _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        _fcntl.flock(fd, _fcntl.LOCK_UN)

    def lock_test(fd):  # F_GETLK for a write lock: the type of a conflicting lock, F_UNLCK (2) when none
        query = _struct.pack("@hhqqi4x", _fcntl.F_WRLCK, 0, 0, 0, 0)
        return _struct.unpack("@hhqqi4x", _fcntl.fcntl(fd, _fcntl.F_GETLK, query))[0]
    _differs("flock", lambda: flock(shared), lambda: flock(other))
    _differs("posix lock", lambda: lock_test(shared), lambda: lock_test(other))
    inode, other_inode = _os.fstat(shared).st_ino, _os.fstat(other).st_ino
    _differs("locks listed", lambda: f":{inode} " in _text("/proc/locks"),
             lambda: f":{other_inode} " in _text("/proc/locks"))
    atime = _os.stat(args["atime_file"]).st_atime_ns
    _report("GOT" if atime != args["atime_ns"] else "NOT", "atime", f"{atime} (set to {args['atime_ns']})")

    def key(name):
        return _sys("keyctl", _ct.c_int(_KEYCTL_SEARCH), _ct.c_int(_USER_KEYRING), _ct.c_char_p(b"user"),
                    _ct.c_char_p(name.encode()), _ct.c_int(0))
    _differs("keyring", lambda: key(_MARK), lambda: key(_NONE))
    _differs("keyring listed", lambda: _MARK in _text("/proc/keys"), lambda: _NONE in _text("/proc/keys"))
    nice = _outcome(lambda: _os.getpriority(_os.PRIO_PROCESS, args["sender_pid"]))
    _report("GOT" if nice == "7" else "NOT", "nice", nice)
    affinity = _outcome(lambda: _os.sched_getaffinity(args["sender_pid"]))
    mine = _outcome(lambda: _os.sched_getaffinity(0))
    _report("GOT" if affinity == "{0}" and mine != "{0}" else "NOT", "cpu affinity", f"{affinity} (own: {mine})")
    print("DONE receive", flush=True)


def clean():
    """Remove what an unsandboxed sender made (the test's control run)."""
    _sys("mq_unlink", _ct.c_char_p(_MARK.encode()))
    key = _KEYS[_MARK]
    for ident, remove in ((_call(_libc.msgget, _ct.c_int(key), _ct.c_int(0)), _libc.msgctl),
                          (_call(_libc.shmget, _ct.c_int(key), _ct.c_size_t(0), _ct.c_int(0)), _libc.shmctl)):
        if isinstance(ident, int):
            remove(_ct.c_int(ident), _ct.c_int(0), None)
    sem = _call(_libc.semget, _ct.c_int(key), _ct.c_int(0), _ct.c_int(0))
    if isinstance(sem, int):
        _libc.semctl(_ct.c_int(sem), _ct.c_int(0), _ct.c_int(0))
    found = _sys("keyctl", _ct.c_int(_KEYCTL_SEARCH), _ct.c_int(_USER_KEYRING), _ct.c_char_p(b"user"),
                 _ct.c_char_p(_MARK.encode()), _ct.c_int(0))
    if isinstance(found, int):
        _sys("keyctl", _ct.c_int(_KEYCTL_INVALIDATE), _ct.c_int(found))
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        for suffix in ("", ".sock", ".fifo"):
            path = _os.path.join(folder, _MARK + suffix)
            _outcome(lambda path=path: _os.unlink(path))


_watch("__SHARED__")
