# Leave a tree no naive removal survives in the child's temp folder, at import: 3,000 nested folders
# (shutil.rmtree raised RecursionError from ~1,000), folders of mode 0o000 at several depths, link loops and
# links out (to / and to the judge's report folder), names with a newline, an escape and bytes that are not
# UTF-8. Answers right otherwise (standalone: also imported on its own by a judge that is then killed).
import os as _os


def _hostile_leftovers(top):
    _os.makedirs(top, exist_ok=True)
    fd = _os.open(top, _os.O_RDONLY | _os.O_DIRECTORY)
    for _ in range(3_000):  # through descriptors: the path grows past PATH_MAX
        _os.mkdir("d", dir_fd=fd)
        inner = _os.open("d", _os.O_RDONLY | _os.O_DIRECTORY, dir_fd=fd)
        _os.close(fd)
        fd = inner
    _os.close(fd)
    for name in (b"new\nline", b"\xff\xfe", b"\x1b[2J", b"-rf"):
        _os.makedirs(_os.path.join(_os.fsencode(top), name, b"inner"))
    for name, target in (("loop", "loop"), ("up", ".."), ("root", "/"), ("out", "__OUT__")):
        _os.symlink(target, _os.path.join(top, name))
    for depth in (1, 2, 3):
        locked = _os.path.join(top, *["locked"] * depth)
        _os.makedirs(locked, exist_ok=True)
        open(_os.path.join(locked, "file"), "w").close()
    for depth in (3, 2, 1):  # innermost first: a locked folder cannot be entered to lock the next
        _os.chmod(_os.path.join(top, *["locked"] * depth), 0o000)
    _os.chmod(top, 0o000)


try:
    _hostile_leftovers(_os.path.join(_os.environ.get("TMPDIR", "/tmp"), "leftovers"))
    print("LEFTOVERS built")
except OSError as _exc:
    print("LEFTOVERS refused errno", _exc.errno)
try:  # its temp folder itself: its own without bubblewrap (with it, a private /tmp of root's)
    _os.chmod(_os.environ.get("TMPDIR", "/tmp"), 0o000)
except OSError:
    pass
