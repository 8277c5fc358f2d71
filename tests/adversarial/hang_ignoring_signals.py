# Ignore every catchable signal, then spin forever inside compute_gae.
import signal as _signal

for _sig in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP, _signal.SIGQUIT, _signal.SIGUSR1, _signal.SIGXCPU):
    _signal.signal(_sig, _signal.SIG_IGN)


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    while True:
        pass
