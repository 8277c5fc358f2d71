# Leave processes behind at import: a double-forked session leader, and an exec'd sleeper in its own session.
import os as _os
import subprocess as _subprocess
import time as _time

try:
    _subprocess.Popen(["sleep", "__MARK__"], start_new_session=True, stdin=_subprocess.DEVNULL,
                      stdout=_subprocess.DEVNULL, stderr=_subprocess.DEVNULL, env={})
except OSError as _exc:
    print("no sleeper", type(_exc).__name__)
if _os.fork() == 0:
    _os.setsid()
    if _os.fork() == 0:
        for _ in range(600):  # outlive the grade, then forge its results
            _time.sleep(0.1)
        with open("__OUT__/FORGED", "w") as _f:
            _f.write("the daemon survived")
    _os._exit(0)
