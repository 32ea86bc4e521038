"""A PaddlePaddle-style EDL process for e2e/edl_test.go (docs/EDL.md's example).

Every process competes for the master role (the master registers the data
tasks); node ranks 0 and 1 also serve as pservers (2 slots, checkpoint path
per index); everyone trains on leased tasks. Events go to
$EDL_DIR/<holder>.log, one per line: "master EPOCH", "pserver INDEX CKPT",
"lease INDEX", "done INDEX PASS".
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.environ["EDL_CLIENT"])
import gpusched_edl  # noqa: E402

holder = "%s:%d" % (os.environ["GPUSCHED_REPLICA_ID"], os.getpid())
log = open(os.path.join(os.environ["EDL_DIR"], holder + ".log"), "a", buffering=1)
c = gpusched_edl.Client(holder=holder)
rank = int(os.environ.get("NODE_RANK", "0"))
stop = threading.Event()


def master_loop():
    mine = 0
    while not stop.is_set():
        m = c.acquire_master(addr="%s:9000" % os.environ.get("GPUSCHED_NODE", "?"), ttl=1.0)
        if m["granted"] and m["epoch"] != mine:
            mine = m["epoch"]
            log.write("master %d\n" % mine)
            try:
                c.register_tasks(["shard-%04d" % i for i in range(1000)], passes=1, max_failures=5, ttl=2.0)
            except gpusched_edl.Error as e:
                if e.status != 409:  # 409: the queue exists (a previous master made it)
                    raise
        stop.wait(0.25)


def pserver_loop():
    while not stop.is_set():
        try:
            p = c.claim_pserver(desired=2, addr="%s:7164" % os.environ.get("GPUSCHED_NODE", "?"), ttl=1.0)
            break
        except gpusched_edl.Error as e:
            if e.status != 409:
                raise
            stop.wait(0.2)  # every slot is held: wait for a dead pserver's lease to run out
    else:
        return
    log.write("pserver %d %s\n" % (p["index"], p.get("checkpoint") or "-"))
    while not stop.is_set():
        c.renew_pserver(p["index"], ttl=1.0, checkpoint="/ckpt/ps-%d" % p["index"])
        stop.wait(0.25)


threading.Thread(target=master_loop, daemon=True).start()
if rank < 2:
    threading.Thread(target=pserver_loop, daemon=True).start()
while True:
    try:
        task = c.lease()
        break_out = task is None
    except gpusched_edl.Error as e:
        if e.status != 404:  # 404: no queue yet, the master is about to make it
            raise
        time.sleep(0.1)
        continue
    if break_out:
        break
    log.write("lease %d\n" % task["index"])
    time.sleep(0.02)  # train on the shard
    log.write("reporting %d\n" % task["index"])
    try:
        c.done(task)
        log.write("done %d %d\n" % (task["index"], task["pass"]))
    except gpusched_edl.Error as e:
        if e.status != 409:
            raise
stop.set()
