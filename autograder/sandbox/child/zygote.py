"""The warm start: a process that has imported torch and the child runtime (worker.py, probe.py, confine.py,
wire.py) but never any submission code, and forks each sandboxed child on the judge's request. Each forked
child then does exactly what a fresh `python -I worker.py` does: it waits for its set-up, confines itself
(own uid, rlimits, Landlock, seccomp: confine.py), and only then imports its submission. Used at the level
without bubblewrap (autograder/sandbox/zygote.py says where and why).

    python -I -u -B zygote.py CONTROL_FD [CONTROL_FD ...]     (one SOCK_SEQPACKET socket per judge lane)
    {"op": "fork", "program": "worker.py" | "probe.py", "argv": [SUBMISSION, WORLD], "home": DIR, "env": {...}}
        with 3 descriptors (SCM_RIGHTS): the child's input, its answers, its output (stdout and stderr)
      -> {"pid": PID} (the child waits for its set-up), or {"error": "..."} (the judge starts a fresh one)
    {"op": "end-grade"} (first socket only: a zygote kept from one grade to the next)
      -> {"cleared": N}: every child it forked that still ran (N of them) killed with its session, and reaped
    whenever a child of that socket ends: {"ended": PID, "code": its exit code, -N for signal N, "cpu": seconds
    of CPU it and the children it reaped used (wait4): the judge's budget counts it as its own reaped child's}
The zygote exits when the first socket closes, or when the judge dies (PR_SET_PDEATHSIG); its children then
die too (each sets PR_SET_PDEATHSIG before anything else). Nothing a child does reaches the zygote: the child
is another uid (it cannot signal, ptrace or open the zygote's /proc entries), holds none of its descriptors,
and its memory is a copy-on-write copy that it alone writes.
"""

from __future__ import annotations

import array
import atexit
import fcntl
import json
import os
import select
import signal
import socket
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # `python -I` leaves the script's folder out
import confine  # noqa: E402
import probe  # noqa: E402
import worker  # noqa: E402  (imports torch, sets one thread)

FDS = 3            # descriptors a fork request carries
MAX_MESSAGE = 1 << 16
IN_FD, OUT_FD = 3, 4  # where a forked child finds its channel (its stdin, stdout, stderr are 0, 1, 2)


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


def receive(sock: socket.socket) -> tuple[dict | None, list[int]]:
    """One request and the descriptors it carries; (None, []) when the judge closed the socket."""
    data, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(FDS * array.array("i").itemsize))
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    return json.loads(data), list(fds)


def become_child(request: dict, fds: list[int], sockets: list[socket.socket], zygote: int) -> None:
    """In the forked process: die with the zygote, own session, only its own descriptors, its folder and
    environment as a fresh child's, then run its program (which confines itself first). Never returns."""
    code = 1
    try:
        confine._prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != zygote:  # the zygote died before the line above: so does this child
            os._exit(1)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        for sock in sockets:
            sock.detach()  # closed below with every other descriptor of the zygote
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds]  # out of the way of 0-4
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(moved[2], 1)
        os.dup2(moved[2], 2)
        os.dup2(moved[0], IN_FD)
        os.dup2(moved[1], OUT_FD)
        os.closerange(OUT_FD + 1, os.sysconf("SC_OPEN_MAX"))  # the zygote's sockets, other children's nothing
        home = request["home"]
        os.chdir(home)
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # as a fresh child: $TMPDIR is its own folder's
        reseed()
        program = os.path.join(home, request["program"])
        sys.argv = [program, *request["argv"], str(IN_FD), str(OUT_FD)]
        program_module = worker if request["program"] == "worker.py" else probe
        become_main(program_module, home)
        program_module.main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - said on its output, as a fresh child's traceback would be
        traceback.print_exc()
    finally:
        try:  # what an interpreter does at exit (the zygote's frames below this one are not unwound)
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def become_main(module, home: str) -> None:
    """Make the program `__main__`, as `python -I worker.py` does: a submission that reaches the worker through
    sys.modules["__main__"] finds it, and finds no zygote, nor the other program; the runtime's files and import
    path are the copies in the child's own folder, as a fresh child's (the zygote's folder is out of its reach)."""
    for name in ("worker", "probe"):
        sys.modules.pop(name, None)
    module.__name__ = "__main__"
    sys.modules["__main__"] = module
    for runtime in (module, confine, worker.wire):
        runtime.__file__ = os.path.join(home, os.path.basename(runtime.__file__ or ""))
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [home if entry == here else entry for entry in sys.path]


def reseed() -> None:
    """Draw afresh what a fresh interpreter draws at its start: the random module's and numpy's global
    generators (torch's default generator has a fixed seed either way)."""
    if "random" in sys.modules:
        sys.modules["random"].seed()
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()


def end_grade(owner: dict[int, socket.socket]) -> int:
    """Kill every child still running, with the session it leads, and reap it: nothing of one grade outlives it
    in a zygote kept for the next (autograder/sandbox/zygote.py, `keep`). How many there were."""
    pids = list(owner)
    for pid in pids:
        for kill in (os.killpg, os.kill):  # each child leads its own session (setsid)
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    owner.clear()
    return len(pids)


def fork(request: dict, fds: list[int], sockets: list[socket.socket]) -> dict:
    if request.get("op") != "fork" or len(fds) != FDS or request.get("program") not in ("worker.py", "probe.py"):
        return {"error": "malformed fork request"}
    if threads() != 1:  # a fork copies one thread: a lock another held would stay held
        return {"error": f"the zygote runs {threads()} threads"}
    zygote = os.getpid()
    pid = os.fork()
    if pid == 0:
        become_child(request, fds, sockets, zygote)
    return {"pid": pid}


def main() -> None:
    confine._prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)
    sockets = [socket.socket(fileno=int(fd)) for fd in sys.argv[1:]]
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    owner: dict[int, socket.socket] = {}  # child pid -> the socket that asked for it
    live = list(sockets)
    while sockets[0] in live:
        ready: list = select.select([*(s.fileno() for s in live), wake_r], [], [])[0]
        if wake_r in ready:
            os.read(wake_r, 4096)
        while owner:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            sock = owner.pop(pid, None)
            if sock is not None and sock in live:  # its CPU: the judge's budget counts it, as a reaped child's
                _send(sock, {"ended": pid, "code": os.waitstatus_to_exitcode(status),
                             "cpu": usage.ru_utime + usage.ru_stime}, live)
        for sock in [s for s in live if s.fileno() in ready]:
            try:
                request, fds = receive(sock)
            except (OSError, ValueError):
                request, fds = None, []
            if request is None:
                live.remove(sock)
                continue
            if request.get("op") == "end-grade" and sock is sockets[0]:
                for fd in fds:
                    os.close(fd)
                _send(sock, {"cleared": end_grade(owner)}, live)
                continue
            try:
                answer = fork(request, fds, sockets)
            finally:
                for fd in fds:
                    os.close(fd)
            if "pid" in answer:
                owner[answer["pid"]] = sock
            _send(sock, answer, live)


def _send(sock: socket.socket, message: dict, live: list[socket.socket]) -> None:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        live.remove(sock)


if __name__ == "__main__":
    main()
