"""Run a command at the "Docker level": root, but namespaces refused, as in Gradescope's container.

Docker's default drops CAP_SYS_ADMIN and its seccomp profile refuses unshare, setns and the namespace
flags of clone, so bubblewrap fails there with "Creating new namespace failed: Operation not
permitted" and the grader falls back to its own uid + Landlock + seccomp. This builds that level
with an outer bubblewrap (which itself needs the namespaces this machine has):

    python tests/docker_level.py -- .venv/bin/python -m pytest tests/test_sandbox_adversarial.py
    argv, fds = docker_level.command(["true"], binds={"/tmp/bundle": "/autograder"}, hide=["/work"])

Inside: `/` as it is, minus CAP_SYS_ADMIN (bounding set too) and with a seccomp filter refusing the
namespace calls (EPERM) and clone3 (ENOSYS), like Docker's; an IPC namespace of its own with an mqueue
file system at /dev/mqueue, as Docker gives every container. /root is shown as 0755 holding only
~/.pyenv (in a Docker image the interpreter lives in /usr, readable by all); `hide` folders are
covered by empty tmpfs (a private /tmp; the repository, when the test is about a bundle).
Needs root and a working bubblewrap outside (tests skip otherwise).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from autograder.sandbox import seccomp  # noqa: E402

DOCKER_REFUSED = ("unshare", "setns", "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen",
                  "fsmount", "fspick")


def docker_filter() -> bytes:
    """The namespace part of Docker's default seccomp profile, in seccomp.py's assembler."""
    arch = seccomp.machine()
    nr = {name: numbers[0 if arch == "x86_64" else 1] for name, numbers in seccomp.SYSCALLS.items()}
    code = [(seccomp.LD_W_ABS, 0, 0, seccomp.NR)]
    code += [(seccomp.JEQ, "deny", 0, nr[name]) for name in DOCKER_REFUSED]
    code += [(seccomp.JEQ, "clone", 0, nr["clone"]), (seccomp.JEQ, "nosys", 0, nr["clone3"]),
             (seccomp.RET, 0, 0, seccomp.RET_ALLOW),
             "clone", (seccomp.LD_W_ABS, 0, 0, seccomp.ARG0),
             (seccomp.JSET, "deny", "allow", seccomp.CLONE_NEW_FLAGS),
             "allow", (seccomp.RET, 0, 0, seccomp.RET_ALLOW),
             "deny", (seccomp.RET, 0, 0, seccomp.RET_ERRNO | errno.EPERM),
             "nosys", (seccomp.RET, 0, 0, seccomp.RET_ERRNO | errno.ENOSYS)]
    return seccomp._assemble(code)


def available() -> str | None:
    """None when this machine can build the level, else why not."""
    if os.geteuid() != 0:
        return "the Docker level is root without CAP_SYS_ADMIN: run as root"
    if not seccomp.supported() or not shutil.which("bwrap"):
        return "needs bubblewrap and an x86_64/aarch64 Linux"
    done = subprocess.run(["bwrap", "--dev-bind", "/", "/", "true"], capture_output=True)
    return None if done.returncode == 0 else "bubblewrap does not work here: " + done.stderr.decode()[-200:]


def command(inner: list[str], binds: dict[str, str] | None = None, hide: list[str] = ()) -> tuple[list[str], int]:
    """(argv, seccomp fd to pass) that runs `inner` at the Docker level; close the fd after starting."""
    read, write = os.pipe()
    os.write(write, docker_filter())
    os.close(write)
    argv = ["bwrap", "--dev-bind", "/", "/", "--cap-drop", "CAP_SYS_ADMIN", "--die-with-parent", "--unshare-ipc",
            "--mqueue", "/dev/mqueue", "--perms", "0755", "--tmpfs", "/root"]
    pyenv = Path("/root/.pyenv")
    if pyenv.is_dir():
        argv += ["--ro-bind", str(pyenv), str(pyenv)]
    for folder in ["/tmp", *hide]:
        argv += ["--perms", "1777" if folder == "/tmp" else "0755", "--tmpfs", folder]
    for kept in sorted({ROOT, Path(sys.prefix).resolve()}):  # a clone (or its venv) in /tmp stays in view
        if kept.is_relative_to("/tmp") and not any(kept.is_relative_to(h) for h in hide):
            argv += ["--bind", str(kept), str(kept)]
    for source, target in (binds or {}).items():
        argv += ["--bind", source, target]
    return argv + ["--seccomp", str(read), "--", *inner], read


def gradescope_layout(bundle: Path, root: Path, name: str, data: bytes) -> Path:
    """/autograder as Gradescope makes it, at `root`: source/ (the unpacked zip, its scripts executable),
    run_autograder beside it, submission/<name> holding `data`, an empty results/."""
    for folder in ("source", "submission", "results"):
        (root / folder).mkdir(parents=True)
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
    for script in ("run_autograder", "setup.sh"):  # zipfile does not restore modes
        (root / "source" / script).chmod(0o755)
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission" / name).write_bytes(data)
    return root


def run(inner: list[str], binds: dict[str, str] | None = None, hide: list[str] = (), **kwargs):
    """subprocess.run of `inner` at the Docker level (where bubblewrap cannot work, so AUTOGRADER_SANDBOX=bwrap,
    which CI sets to forbid a silent fallback outside, does not apply; =rlimits, a test's own, does)."""
    argv, fd = command(inner, binds, hide)
    env = {k: v for k, v in kwargs.pop("env", os.environ).items() if (k, v) != ("AUTOGRADER_SANDBOX", "bwrap")}
    try:
        return subprocess.run(argv, pass_fds=[fd], env=env, **kwargs)
    finally:
        os.close(fd)


if __name__ == "__main__":
    problem = available()
    if problem:
        sys.exit(f"docker_level: {problem}")
    args = sys.argv[1:]
    sys.exit(run(args[1:] if args[:1] == ["--"] else args).returncode)
