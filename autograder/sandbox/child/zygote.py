"""The warm start: a process that has imported torch and the child runtime (worker.py, confine.py, wire.py) but
never any submission code, and forks each sandboxed worker on the judge's request (the secrets probe, which imports
no torch, starts fresh). Each forked
child then does exactly what a fresh `python -I worker.py` does: it waits for its set-up, confines itself
(own uid, rlimits, Landlock, seccomp: confine.py), and only then imports its submission. Under bubblewrap it first
enters the namespaces of its own sandbox (enter_sandbox). Used wherever the judge is root (autograder/sandbox/zygote.py
says where and why).

    python -I -u -B zygote.py CONTROL_FD [CONTROL_FD ...]     (one SOCK_SEQPACKET socket per judge lane)
    {"op": "fork", "program": "worker.py", "argv": [SUBMISSION, WORLD], "home": DIR, "cwd": DIR,
     "env": {...}} with 3 descriptors (SCM_RIGHTS): the child's input, its answers, its output (stdout and stderr),
        then under bubblewrap those of its sandbox's namespaces, joined in that order
      -> {"pid": PID} (the child waits for its set-up; under bubblewrap PID is the process inside its sandbox),
         or {"error": "..."} (the judge starts a fresh one)
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
import ctypes
import fcntl
import json
import os
import select
import signal
import socket
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # `python -I` leaves the script's folder out
import confine  # noqa: E402
import worker  # noqa: E402  (imports torch, sets one thread)

FDS = 3            # descriptors a fork request carries: the child's input, its answers, its output...
MAX_FDS = 16       # ...then, under bubblewrap, its sandbox's namespaces, joined in the order given (zygote.NAMESPACES)
MAX_MESSAGE = 1 << 16
IN_FD, OUT_FD = 3, 4  # where a forked child finds its channel (its stdin, stdout, stderr are 0, 1, 2)
PR_SET_DUMPABLE = 4


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


def receive(sock: socket.socket) -> tuple[dict | None, list[int]]:
    """One request and the descriptors it carries; (None, []) when the judge closed the socket."""
    data, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(MAX_FDS * array.array("i").itemsize))
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    return json.loads(data), list(fds)


def become_child(request: dict, fds: list[int], sockets: list[socket.socket], zygote: int,
                 sandbox: list[int], told: int) -> None:
    """In the forked process: die with the zygote, own session, into its own sandbox's namespaces (`sandbox`, under
    bubblewrap: enter_sandbox), only its own descriptors, its folder and environment as a fresh child's, then run
    its program (which confines itself first). Never returns."""
    code = 1
    try:
        confine._prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != zygote:  # the zygote died before the line above: so does this child
            os._exit(1)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        if sandbox:
            enter_sandbox(sandbox, told)
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
        os.chdir(request.get("cwd", home))  # as a fresh child's: its folder, or bubblewrap's --chdir /tmp
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # as a fresh child: $TMPDIR is its own folder's
        reseed()
        program = os.path.join(home, request["program"])
        sys.argv = [program, *request["argv"], str(IN_FD), str(OUT_FD)]
        become_main(worker, home)
        worker.main()
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


def enter_sandbox(namespaces: list[int], told: int) -> None:
    """Join the namespaces of the child's own bubblewrap sandbox (autograder/sandbox/zygote.NAMESPACES: its IPC,
    network, host name, cgroup, pid and mount namespaces, the last with its private /tmp, /dev/shm and /proc and
    the read-only view of the machine), then fork: the process that returns is inside every one of them, as a fresh
    child's worker is. This process sends its pid (as the judge sees pids) on `told`, waits for it and ends as it
    ends (it never returns): the judge kills the one inside, never this one, whose end the zygote reaps with the
    CPU of both."""
    for fd in namespaces:
        if confine.LIBC.setns(fd, 0) != 0:
            raise OSError(ctypes.get_errno(), f"setns: {os.strerror(ctypes.get_errno())}")
        os.close(fd)
    pid = os.fork()
    if pid == 0:
        os.close(told)
        confine._prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != 0:  # its parent is outside its pid namespace (0), unless that parent is already gone
            os._exit(1)
        return
    os.write(told, str(pid).encode())
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # its channel and output are the child's alone: their ends tell its end
    _, status = os.waitpid(pid, 0)
    while not (os.WIFEXITED(status) or os.WIFSIGNALED(status)):  # a stop (a traced child's) is not its end
        _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):  # end as it ended: the same signal (not dumpable: no core, nor a pipe's helper)
        confine._prctl(PR_SET_DUMPABLE, 0)
        if os.WTERMSIG(status) not in (signal.SIGKILL, signal.SIGSTOP):  # the two whose action is fixed
            signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def become_main(module, home: str) -> None:
    """Make the program `__main__`, as `python -I worker.py` does: a submission that reaches the worker through
    sys.modules["__main__"] finds it, and finds no zygote; the runtime's files and import path are the copies in the
    child's own folder, as a fresh child's (the zygote's folder is out of its reach)."""
    sys.modules.pop("worker", None)
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


def end_grade(owner: dict[int, tuple[socket.socket, int]]) -> int:
    """Kill every child still running, with the session it leads (and the one inside its sandbox), and reap it:
    nothing of one grade outlives it in a zygote kept for the next (autograder/sandbox/zygote.py, `keep`). How many
    there were."""
    pids = list(owner)
    for pid in [*pids, *(told for _, told in owner.values())]:
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
    inside = [told for pid, (_, told) in owner.items() if told != pid]  # reaped in their sandboxes, not here
    deadline = time.monotonic() + 5
    while any(map(confine.alive, inside)) and time.monotonic() < deadline:
        time.sleep(0.01)
    owner.clear()
    return len(pids)



def fork(request: dict, fds: list[int], sockets: list[socket.socket]) -> tuple[dict, int | None]:
    """Fork the child asked for: ({"pid": PID}, the pid forked), or ({"error": ...}, None). With a sandbox to enter,
    PID is the process inside it, which runs the program; the one forked waits for it and ends as it ends, so that
    its CPU reaches the judge with the forked one's (the judge sees, signals and kills PID alone)."""
    if request.get("op") != "fork" or not FDS <= len(fds) <= MAX_FDS \
            or request.get("program") != "worker.py":
        return {"error": "malformed fork request"}, None
    if threads() != 1:  # a fork copies one thread: a lock another held would stay held
        return {"error": f"the zygote runs {threads()} threads"}, None
    zygote = os.getpid()
    sandbox = fds[FDS:]
    told_r, told = os.pipe() if sandbox else (-1, -1)
    pid = os.fork()
    if pid == 0:
        if sandbox:
            os.close(told_r)
        become_child(request, fds[:FDS], sockets, zygote, sandbox, told)
    if not sandbox:
        return {"pid": pid}, pid
    os.close(told)
    with os.fdopen(told_r, "rb") as said:
        inner = said.read(32)  # its pid once it is inside, or nothing (it failed to enter and ended)
    if not inner.isdigit():
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return {"error": "the child could not enter its sandbox"}, None
    return {"pid": int(inner)}, pid


def main() -> None:
    confine._prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)
    sockets = [socket.socket(fileno=int(fd)) for fd in sys.argv[1:]]
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    owner: dict[int, tuple[socket.socket, int]] = {}  # pid forked -> the socket that asked for it, the pid it was told
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
            sock, told = owner.pop(pid, (None, pid))
            if sock is not None and sock in live:  # its CPU: the judge's budget counts it, as a reaped child's
                _send(sock, {"ended": told, "code": os.waitstatus_to_exitcode(status),
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
                answer, forked = fork(request, fds, sockets)
            finally:
                for fd in fds:
                    os.close(fd)
            if forked is not None:
                owner[forked] = (sock, answer["pid"])
            _send(sock, answer, live)


def _send(sock: socket.socket, message: dict, live: list[socket.socket]) -> None:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        live.remove(sock)


if __name__ == "__main__":
    main()
