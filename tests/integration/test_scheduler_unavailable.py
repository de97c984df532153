"""While the scheduler is down, a write and a read that needs it answer 503 ``scheduler_unavailable`` with
``Retry-After`` within ``SCHEDULER_WAIT``, never 500 or a minute-long hang; once it is back the same
write succeeds and nothing was registered twice (issue 27).

The launcher restarts a killed scheduler within a second or two, so it is paused (SIGSTOP) first: the
scheduler then stays down for as long as the test needs.
"""

from __future__ import annotations

import os
import signal
import time

import httpx

from bench.datasets import wait_for_task
from gateway.cluster import SCHEDULER_WAIT
from tests.support.cluster import RunningCluster


def test_requests_get_a_retryable_503_while_the_scheduler_is_down() -> None:
    with RunningCluster(shards=1) as running, httpx.Client(base_url=running.url, timeout=90) as client:
        assert running.process is not None
        launcher = running.process.pid
        scheduler = running.backend_pid("scheduler")
        assert scheduler is not None
        os.kill(launcher, signal.SIGSTOP)
        try:
            os.kill(scheduler, signal.SIGKILL)
            # The first call may still find the dead scheduler's connection open: it is sent, and lost.
            lost = client.post("/indexes/books/documents", json=[{"id": 1, "title": "Dune"}])
            time.sleep(1)
            started = time.monotonic()
            write = client.post("/indexes/books/documents", json=[{"id": 1, "title": "Dune"}])
            waited = time.monotonic() - started
            read = client.get("/tasks")
        finally:
            os.kill(launcher, signal.SIGCONT)

        for answer in (lost, write, read):
            assert answer.status_code == 503, answer.text
            assert answer.json()["code"] == "scheduler_unavailable"
            assert answer.json()["type"] == "system"
            assert answer.headers["Retry-After"] == "10"
        assert "could not be reached" in write.json()["message"], write.json()
        assert SCHEDULER_WAIT - 1 < waited < SCHEDULER_WAIT + 10, waited

        running.wait_healthy(60)
        task = client.post("/indexes/books/documents", json=[{"id": 1, "title": "Dune"}])
        assert task.status_code == 202, task.text
        done = wait_for_task(client, task.json()["taskUid"], time.monotonic() + 60)
        assert done["status"] == "succeeded", done
        assert client.get("/tasks").json()["total"] == 1
