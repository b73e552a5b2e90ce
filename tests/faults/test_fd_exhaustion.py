#!/usr/bin/env python3
"""Descriptor exhaustion: bisectd started with a low RLIMIT_NOFILE gets far more idle connections than it has
descriptors left. Its accept backs off and says so once, not once per attempt (no log flood); once the connections
close, the API answers again."""
import os
import resource
import socket
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faults_lib  # noqa: E402,F401 - puts the integration harness on the path
from harness import check, run, wait_for  # noqa: E402

HEADROOM = 24       # descriptors above what the idle daemon has open
CONNECTIONS = 200   # idle clients, far more than the headroom (and than the 64-connection cap)
HOLD_S = 8
LOG_LINES_BOUND = 20


def answers(env):
    try:
        with urllib.request.urlopen(env.url + "/api/v1/status", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def log_lines(env):
    with open(env.log_path, "rb") as f:
        return f.read().count(b"\n")


def wait_header_timeout(env):
    """One idle connection until the daemon closes it (its request-head timeout), before the descriptors run out.
    UBSan (the sanitizer build) checks the vptr of an error category it has not met yet through a pipe it opens:
    met first with every descriptor taken, beast's timeout category fails that check as an invalid vptr."""
    with socket.create_connection(("127.0.0.1", env.port), timeout=30) as s:
        check(s.recv(1) == b"", "an idle connection got an answer instead of being closed")


def test(env):
    # A first start to count what the daemon keeps open when idle; then the real start with the headroom only.
    env.start_daemon()
    time.sleep(1)
    idle_fds = len(os.listdir(f"/proc/{env.daemon.pid}/fd"))
    env.kill_daemon()
    limit = idle_fds + HEADROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))  # inherited by the daemon only: restored at once
    try:
        env.start_daemon()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    pid = env.daemon.pid
    print(f"fd-exhaustion: bisectd idles with {idle_fds} descriptors; started with RLIMIT_NOFILE {limit}")
    wait_header_timeout(env)

    before = log_lines(env)
    clients = []
    try:
        for _ in range(CONNECTIONS):
            s = socket.socket()
            s.settimeout(5)
            s.connect(("127.0.0.1", env.port))  # completes in the kernel's backlog even when bisectd cannot accept
            clients.append(s)
        time.sleep(HOLD_S)
        open_fds = len(os.listdir(f"/proc/{pid}/fd"))
        check(env.daemon.poll() is None, "bisectd exited under descriptor exhaustion")
        during = log_lines(env) - before
        print(f"fd-exhaustion: {len(clients)} idle connections for {HOLD_S}s: bisectd at {open_fds} of {limit} "
              f"descriptors, {during} log lines")
        check(open_fds >= limit - 2, f"bisectd never ran out of descriptors ({open_fds} of {limit}): no exhaustion")
        check(during <= LOG_LINES_BOUND, f"{during} log lines in {HOLD_S}s of descriptor exhaustion:\n"
                                         f"{env.log_tail(20)}")
    finally:
        for s in clients:
            s.close()
    closed_at = time.time()
    wait_for(lambda: answers(env), 30, "the API did not answer again after the connections closed")
    print(f"fd-exhaustion: the API answered again {time.time() - closed_at:.1f}s after the connections closed")
    with open(env.log_path, errors="replace") as f:
        log = f.read()
    check("http accept: " in log and "backing off" in log, "the exhaustion was not logged")


if __name__ == "__main__":
    sys.exit(run("faults-fd-exhaustion", test))
