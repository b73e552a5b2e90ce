#!/usr/bin/env python3
"""The database write-locked by another process (BEGIN EXCLUSIVE on the SQLite file) while a report is due: no mail
goes out while the store cannot record the delivery, then exactly one once the lock is released."""
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_lib import BAD, GOOD, NORMAL_BENCH, bisect_planted, make_tree, query, write_job  # noqa: E402
from harness import check, free_port, run, wait_for  # noqa: E402

LOCK_S = 60  # past the report's next attempt (10 s back-off) and a tick whose writing steps each wait out the
            # store's 10 s busy timeout (poll, queue, ...) before the outbox step


def test(env):
    shas = make_tree(os.path.join(env.dir, "repo"), [NORMAL_BENCH.format(mean=GOOD)] * 4 +
                     [NORMAL_BENCH.format(mean=BAD)] * 4)
    job = write_job(os.path.join(env.dir, "job.yaml"))
    env.smtp_port = free_port()  # nobody listens yet: the first delivery fails and the report waits for a retry
    env.start_daemon()
    bid = bisect_planted(env, shas, job)
    wait_for(lambda: query(env, "SELECT attempts FROM outbox")[0][0] >= 1, 60, "the first delivery was never tried")

    env.start_smtp(env.smtp_port)
    lock = sqlite3.connect(os.path.join(env.data, "bisectd.db"), isolation_level=None, timeout=30)
    lock.execute("BEGIN EXCLUSIVE")
    locked_at = time.time()
    try:
        due = query(env, "SELECT next_attempt_at FROM outbox")[0][0]
        print(f"locked-db: store locked; the report is due again in {due - time.time():.0f}s")
        while time.time() - locked_at < LOCK_S:
            check(not env.mails(), f"a mail went out {time.time() - locked_at:.1f}s into the lock")
            check(env.daemon.poll() is None, "bisectd exited during the lock")
            time.sleep(0.5)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    released_at = time.time()
    wait_for(lambda: len(env.mails()) >= 1, 120, "no mail after the lock was released")
    delay = time.time() - released_at
    time.sleep(5)  # several ticks more: a second delivery would show now
    mails = env.mails()
    rows = query(env, "SELECT state, attempts FROM outbox")
    log = open(env.log_path, errors="replace").read()
    refused = log.count("not sent now, the store cannot record the delivery")
    print(f"locked-db: {len(mails)} mail(s), the first {delay:.1f}s after the release; delivery refused {refused} "
          f"time(s) during the {LOCK_S}s lock; outbox {rows}")
    check(len(mails) == 1, f"{len(mails)} mails arrived, expected exactly one")
    check(rows[0][0] == "sent", f"outbox: {rows}")
    check(refused >= 1, "the daemon never tried, and declined, to deliver during the lock")
    check(env.ctl_json("report", bid)["sent"], "the report is not marked sent")


if __name__ == "__main__":
    sys.exit(run("faults-locked-db", test))
