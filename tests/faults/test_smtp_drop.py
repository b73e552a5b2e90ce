#!/usr/bin/env python3
"""An SMTP server that drops the connection in the middle of DATA, once, then behaves: the report is delivered
exactly once (after the outbox's back-off), and the failed attempt is recorded."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faults_lib import BAD, GOOD, NORMAL_BENCH, bisect_planted, make_tree, query, write_job  # noqa: E402
from harness import check, run, wait_for  # noqa: E402
from smtp_fault_proxy import DropMidData  # noqa: E402


def test(env):
    shas = make_tree(os.path.join(env.dir, "repo"), [NORMAL_BENCH.format(mean=GOOD)] * 4 +
                     [NORMAL_BENCH.format(mean=BAD)] * 4)
    job = write_job(os.path.join(env.dir, "job.yaml"))
    env.start_smtp()
    proxy = DropMidData(env.smtp_port)
    try:
        env.smtp_port = proxy.port  # the daemon talks to the proxy
        env.start_daemon()
        bid = bisect_planted(env, shas, job)

        wait_for(lambda: proxy.drops == 1, 60, "the proxy never dropped a delivery mid-DATA")
        dropped_at = time.time()
        wait_for(lambda: len(env.mails()) >= 1, 120, "the report never arrived after the drop")
        delay = time.time() - dropped_at
        time.sleep(5)  # several ticks more: a second delivery would show now
        mails = env.mails()
        check(len(mails) == 1, f"{len(mails)} mails arrived, expected exactly one")
        check(shas[4][:10] in mails[0][0], "the mail does not name the culprit")
        check(mails[0][1] == ["watch@example.org"], f"recipients: {mails[0][1]}")
        rows = query(env, "SELECT state, attempts, last_error FROM outbox")
        print(f"smtp-drop: {proxy.connections} SMTP connections, {proxy.drops} dropped mid-DATA; delivered "
              f"{delay:.1f}s after the drop; outbox {rows}")
        check(len(rows) == 1 and rows[0][0] == "sent" and rows[0][1] >= 1, f"outbox: {rows}")
        check(proxy.connections == 2, f"{proxy.connections} SMTP connections, expected the dropped one and one more")
        check(env.ctl_json("report", bid)["sent"], "the report is not marked sent")
        log = open(env.log_path, errors="replace").read()
        check("retry in" in log, "the dropped delivery was not logged with its retry")
    finally:
        proxy.close()


if __name__ == "__main__":
    sys.exit(run("faults-smtp-drop", test))
