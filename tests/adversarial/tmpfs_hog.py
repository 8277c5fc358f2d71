# Hold memory as files in memory-backed folders (/dev/shm, /tmp, $TMPDIR): 1 GiB each, kept, from the
# first call of compute_gae on (which otherwise answers right).
import os as _os

_reference_gae = compute_gae  # noqa: F821 - the reference's, defined above this snippet
_held = []


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    for _folder in ("/dev/shm", _os.environ.get("TMPDIR", "/tmp"), "/tmp") if not _held else ():
        _mib = 0
        try:
            for _i in range(64):  # 64 x 16 MiB (RLIMIT_FSIZE is 16 MiB a file)
                with open(f"{_folder}/lab12-hog-{_os.getpid()}-{_i}", "wb") as _f:
                    _f.write(b"\1" * (16 << 20))
                _mib += 16
        except OSError as _exc:
            print("TMPFS", _folder, "refused errno", _exc.errno)
        print("TMPFS held", _folder, _mib)
        _held.append(_folder)
    return _reference_gae(rewards, values, mask, gamma, lam)
