"""Tests of gpusched_edl against a real `gpusched server` (run by `make test`).

$GPUSCHED_BIN names the gpusched binary (default: bin/gpusched of the checkout).
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpusched_edl  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("GPUSCHED_BIN", os.path.join(ROOT, "bin", "gpusched"))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(BIN):
            raise unittest.SkipTest("gpusched binary %s not built (make build)" % BIN)
        cls.dir = tempfile.mkdtemp()
        cls.url = "http://127.0.0.1:%d" % free_port()
        cls.proc = subprocess.Popen([BIN, "server", "--listen", cls.url[7:], "--data", cls.dir],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while True:
            try:
                urllib.request.urlopen(cls.url + "/healthz", timeout=1).read()
                with open(os.path.join(cls.dir, "admin.token")) as f:
                    cls.token = f.read().strip()
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        os.environ["GPUSCHED_TOKEN"] = cls.token  # what a replica finds in its environment

    @classmethod
    def tearDownClass(cls):
        os.environ.pop("GPUSCHED_TOKEN", None)
        cls.proc.terminate()
        cls.proc.wait(10)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def submit(self):
        req = urllib.request.Request(self.url + "/v1/jobs", method="POST",
                                     data=json.dumps({"command": ["train"], "gpus": 1}).encode(),
                                     headers={"Authorization": "Bearer " + self.token})
        return json.loads(urllib.request.urlopen(req).read())["id"]

    def test_five_line_trainer(self):
        job = self.submit()
        gpusched_edl.Client(self.url, job=job).register_tasks(["a", "b", "c"], passes=2)
        seen = []
        c = gpusched_edl.Client(self.url, job=job, holder="trainer-0")
        for task in c.tasks():
            seen.append((task["pass"], task["data"]))
        self.assertEqual(seen, [(1, "a"), (1, "b"), (1, "c"), (2, "a"), (2, "b"), (2, "c")])
        q = c.queue()
        self.assertTrue(q["finished"])
        self.assertEqual(q["done_total"], 6)

    def test_failed_body_returns_task(self):
        job = self.submit()
        c = gpusched_edl.Client(self.url, job=job, holder="t")
        c.register_tasks(["x"], max_failures=2)
        with self.assertRaises(RuntimeError):
            for _ in c.tasks():
                raise RuntimeError("out of memory")
        self.assertEqual(c.queue()["todo"], 1)
        task = c.lease()
        self.assertEqual(task["failures"], 1)
        c.done(task)
        with self.assertRaises(gpusched_edl.Error) as e:
            c.done(task)
        self.assertEqual(e.exception.status, 409)
        self.assertIsNone(c.lease())

    def test_master_and_pservers(self):
        job = self.submit()
        a = gpusched_edl.Client(self.url, job=job, holder="a")
        b = gpusched_edl.Client(self.url, job=job, holder="b")
        self.assertTrue(a.acquire_master(addr="n1:8000", ttl=0.3)["granted"])
        m = b.acquire_master(ttl=5)
        self.assertFalse(m["granted"])
        self.assertEqual(m["addr"], "n1:8000")
        time.sleep(0.4)  # a dies: its lease runs out
        m = b.acquire_master(ttl=5)
        self.assertTrue(m["granted"])
        self.assertEqual(m["epoch"], 2)
        p = a.claim_pserver(desired=2, ttl=0.3)
        self.assertEqual(p["index"], 0)
        a.renew_pserver(0, ttl=0.3, checkpoint="/ckpt/ps-0")
        self.assertEqual(b.claim_pserver(desired=2)["index"], 1)
        time.sleep(0.4)
        again = gpusched_edl.Client(self.url, job=job, holder="a2").claim_pserver(desired=2)
        self.assertEqual((again["index"], again["checkpoint"]), (0, "/ckpt/ps-0"))
        self.assertEqual(b.pservers()["live"], 2)

    def test_server_list_fails_over(self):
        job = self.submit()
        dead = "http://127.0.0.1:%d" % free_port()
        c = gpusched_edl.Client(dead + "," + self.url, job=job)
        self.assertEqual(c.master()["holder"], "")
        with self.assertRaises(gpusched_edl.Error):
            gpusched_edl.Client(dead, job=job, patience=1).master()

    def test_authentication(self):
        job = self.submit()
        with self.assertRaises(gpusched_edl.Error) as e:
            gpusched_edl.Client(self.url, job=job, token="").master()
        self.assertEqual(e.exception.status, 401)
        self.assertIn("Authorization: Bearer", e.exception.message)
        with self.assertRaises(gpusched_edl.Error) as e:
            gpusched_edl.Client(self.url, job=job, token="gps_bogus").master()
        self.assertEqual(e.exception.status, 401)
        self.assertEqual(gpusched_edl.Client(self.url, job=job, token=self.token).master()["holder"], "")

    def test_errors(self):
        with self.assertRaises(ValueError):
            gpusched_edl.Client("ftp://x", job="j1")
        with self.assertRaises(gpusched_edl.Error) as e:
            gpusched_edl.Client(self.url, job="j999").master()
        self.assertEqual(e.exception.status, 404)
        job = self.submit()
        with self.assertRaises(gpusched_edl.Error) as e:
            gpusched_edl.Client(self.url, job=job).register_tasks([])
        self.assertEqual(e.exception.status, 400)


if __name__ == "__main__":
    unittest.main()
