"""gpusched_edl: seed 001's EDL primitives for a training process (stdlib only).

A job's processes share, through the gpusched servers (docs/EDL.md):

* a master lock: at most one process holds the master role, with a lease;
* a data task queue: trainers lease the next task, report it done or failed;
  an expired lease returns the task to the queue;
* pserver slots: a parameter server claims the smallest free index and finds
  the checkpoint path its predecessor recorded.

A trainer in five lines::

    from gpusched_edl import Client
    c = Client()                       # $GPUSCHED_SERVER, $GPUSCHED_JOB_ID, $GPUSCHED_REPLICA_ID, $GPUSCHED_TOKEN
    for task in c.tasks():             # leases, reports done (or failed on an exception)
        train_on(task["data"])

The server may be a comma-separated list of the servers sharing one etcd
store: the client follows the followers' 307 redirects to the leader, tries
the next server when one cannot be reached, and waits while no leader is
elected (503 with Retry-After).

Servers authenticate by default (docs/SECURITY.md): the client sends the
bearer token it is given, else $GPUSCHED_TOKEN, which gpusched sets for
every replica of a job (a job token may use its own job's EDL state); an
https server's certificate is checked against the system's CAs, or the CA
file given (else $GPUSCHED_CA).
"""

import json
import os
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Client", "Error"]

DEFAULT_SERVER = "http://127.0.0.1:7070"


class Error(Exception):
    """An error answer of the server (status and message) or no answer at all."""

    def __init__(self, status, message):
        super().__init__("server: %s %s" % (status, message))
        self.status = status
        self.message = message


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # the client follows redirects itself (POST included)


class Client:
    """A client of one job's EDL primitives.

    servers: a URL or a comma-separated list (default $GPUSCHED_SERVER, then
    http://127.0.0.1:7070); job: the job ID (default $GPUSCHED_JOB_ID);
    holder: this process's name (default $GPUSCHED_REPLICA_ID, else host:pid);
    patience: seconds to keep trying while no server answers or none leads;
    token: the bearer token (default $GPUSCHED_TOKEN; none without one);
    ca: a PEM file of the CA that signed the servers' certificates (default
    $GPUSCHED_CA; else the system's CAs).
    """

    def __init__(self, servers=None, job=None, holder=None, timeout=10.0, patience=15.0, token=None, ca=None):
        servers = servers or os.environ.get("GPUSCHED_SERVER") or DEFAULT_SERVER
        self.servers = [s.strip().rstrip("/") for s in servers.split(",") if s.strip()]
        if not self.servers:
            raise ValueError("no server URL")
        for s in self.servers:
            u = urllib.parse.urlparse(s)
            if u.scheme not in ("http", "https") or not u.netloc:
                raise ValueError("server URL %r: want http://HOST:PORT" % s)
        self.job = job or os.environ.get("GPUSCHED_JOB_ID")
        if not self.job:
            raise ValueError("no job: pass job= or set $GPUSCHED_JOB_ID")
        self.holder = holder or os.environ.get("GPUSCHED_REPLICA_ID") or "%s:%d" % (os.uname().nodename, os.getpid())
        self.timeout = timeout
        self.patience = patience
        self._current = self.servers[0]
        self._token = token if token is not None else os.environ.get("GPUSCHED_TOKEN", "")
        ca = ca or os.environ.get("GPUSCHED_CA")
        handlers = [_NoRedirect]
        if ca:
            handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=ca)))
        self._opener = urllib.request.build_opener(*handlers)

    # -- transport ----------------------------------------------------------

    def _request(self, method, path, body=None):
        """Send one request, following redirects and failing over; return the JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        deadline = time.monotonic() + self.patience
        target, tried, last = self._current, 0, None
        while True:
            headers = {"Content-Type": "application/json", "Accept": "application/json"}
            if self._token:
                headers["Authorization"] = "Bearer " + self._token
            req = urllib.request.Request(target + path, data=data, method=method, headers=headers)
            try:
                with self._opener.open(req, timeout=self.timeout) as resp:
                    self._current = target
                    return json.loads(resp.read() or b"null")
            except urllib.error.HTTPError as e:
                payload = e.read()
                if e.code in (307, 308) and e.headers.get("Location"):
                    loc = urllib.parse.urlparse(e.headers["Location"])
                    target = "%s://%s" % (loc.scheme, loc.netloc)
                    continue
                if e.code == 503 and e.headers.get("Retry-After") and time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                raise Error(e.code, _message(payload)) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
                last = e
                tried += 1
                sent = method not in ("GET", "HEAD") and not _refused(e)
                if sent or time.monotonic() >= deadline:
                    raise Error(0, "no answer from %s: %s" % (target, e)) from None
                target = self.servers[(self.servers.index(target) + 1) % len(self.servers)] \
                    if target in self.servers else self.servers[0]
                if tried % len(self.servers) == 0:
                    if tried >= 2 * len(self.servers):
                        raise Error(0, "no server of %s answers: %s" % (",".join(self.servers), last)) from None
                    time.sleep(0.2)

    def _job(self, suffix):
        return "/v1/jobs/%s%s" % (urllib.parse.quote(self.job, safe=""), suffix)

    # -- master lock --------------------------------------------------------

    def master(self):
        """The job's master role: {"holder", "addr", "epoch", ...}; holder "" when free."""
        return self._request("GET", self._job("/master"))

    def acquire_master(self, addr="", ttl=10.0):
        """Take or renew the master role; returns it with "granted" true when this process holds it."""
        return self._request("POST", self._job("/master"), {"holder": self.holder, "addr": addr, "ttl_s": ttl})

    def release_master(self):
        """Give the master role up."""
        return self._request("POST", self._job("/master"), {"holder": self.holder, "release": True})

    # -- data task queue ----------------------------------------------------

    def register_tasks(self, tasks, passes=1, max_failures=3, ttl=60.0):
        """Register the job's data tasks (a list of strings); an existing queue is an Error 409."""
        return self._request("POST", self._job("/tasks"),
                             {"tasks": list(tasks), "passes": passes, "max_failures": max_failures, "ttl_s": ttl})

    def queue(self):
        """The task queue's counts: pass, todo, leased, done, failed, done_total, finished."""
        return self._request("GET", self._job("/tasks"))

    def lease(self, ttl=None, wait=True, done=None):
        """Lease the next task: {"index", "data", "pass", "lease", ...}; None once every pass is over.

        done: the previous task, reported done in the same request (an Error 409, and no lease,
        when its lease is no longer current). While every remaining task is leased by others,
        wait (or return {"status": "wait"} with wait=False).
        """
        body = {"holder": self.holder}
        if ttl:
            body["ttl_s"] = ttl
        if done is not None:
            body["done"] = {"index": done["index"], "lease": done["lease"]}
        while True:
            ans = self._request("POST", self._job("/tasks/lease"), body)
            body.pop("done", None)  # reported: a second round only waits
            if ans["status"] == "leased":
                return ans["task"]
            if ans["status"] == "finished":
                return None
            if not wait:
                return ans
            time.sleep(min(max(ans.get("retry_after_s", 0.5), 0.05), 5.0))

    def done(self, task):
        """Report a leased task done (an Error 409 when its lease is no longer current)."""
        return self._request("POST", self._job("/tasks/%d/done" % task["index"]), {"lease": task["lease"]})

    def failed(self, task):
        """Report a leased task failed: it returns to the queue, or is marked failed."""
        return self._request("POST", self._job("/tasks/%d/failed" % task["index"]), {"lease": task["lease"]})

    def tasks(self, ttl=None):
        """Iterate over leased tasks until every pass is over; each is reported done after
        the loop body (with the next lease: one request per task), or failed if the body
        raises (the exception goes on)."""
        prev = None
        while True:
            try:
                task = self.lease(ttl=ttl, done=prev)
            except Error as e:
                if e.status != 409 or prev is None:
                    raise
                task = self.lease(ttl=ttl)  # 409: prev's lease expired and went to another trainer
            if task is None:
                return
            try:
                yield task
            except BaseException:  # the body raised, or the loop was left
                self.failed(task)
                raise
            prev = task

    # -- pserver slots ------------------------------------------------------

    def claim_pserver(self, desired, addr="", ttl=10.0):
        """Claim the smallest free pserver index below desired: {"index", "checkpoint", "epoch", ...}."""
        return self._request("POST", self._job("/pservers/claim"),
                             {"holder": self.holder, "addr": addr, "desired": desired, "ttl_s": ttl})

    def renew_pserver(self, index, ttl=10.0, checkpoint="", release=False):
        """Renew slot index (recording its checkpoint path), or release it."""
        body = {"holder": self.holder, "ttl_s": ttl, "checkpoint": checkpoint}
        if release:
            body = {"holder": self.holder, "release": True}
        return self._request("POST", self._job("/pservers/%d/renew" % index), body)

    def pservers(self):
        """The job's pserver slots and how many are held ("live")."""
        return self._request("GET", self._job("/pservers"))


def _message(payload):
    try:
        return json.loads(payload).get("error", "")
    except (ValueError, AttributeError):
        return payload[:200].decode(errors="replace")


def _refused(e):
    reason = getattr(e, "reason", e)
    return isinstance(reason, ConnectionRefusedError) or "refused" in str(reason).lower()
