"""The bulk scenario: the scheduler is killed right after each large addition is acknowledged.

Unlike the random cycles, each round sends one big batch and checks that every document of it arrives
exactly once whatever stage the batch had reached when the scheduler died; it shares only the kill
and the HTTP helpers with the cycles, so it has its own module and its own ``BulkReport``.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.cluster import RunningCluster
from tests.support.crash.api import get_json, wait_task
from tests.support.crash.kills import kill_and_recover


@dataclass
class BulkReport:
    rounds: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    documents: int = 0
    log_excerpt: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"bulk rounds: {len(self.rounds)}, documents: {self.documents}, problems: {len(self.problems)}"
        ]
        lines += [f"  {r}" for r in self.rounds]
        lines += [f"  PROBLEM {p}" for p in self.problems[:40]]
        if self.problems:
            lines += [f"  | {line}" for line in self.log_excerpt]
        return "\n".join(lines)


def run_bulk_scheduler_kills(
    rounds: int = 5, documents: int = 20_000, delays: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1, 0.2)
) -> BulkReport:
    """Kill the scheduler right after each large addition is acknowledged; every document arrives once.

    The delays spread the kill over the batch's life (queued, planning, on the shards, committed);
    each round notes whether the restarted scheduler resumed an in-flight batch.
    """
    report = BulkReport()
    index = "bulk"
    with RunningCluster(shards=2) as cluster, httpx.Client(base_url=cluster.url, timeout=120.0) as client:
        for round_no in range(rounds):
            base = round_no * documents
            docs = [{"id": base + i, "title": f"doc {base + i}", "round": round_no} for i in range(documents)]
            response = client.post(f"/indexes/{index}/documents", json=docs)
            if response.status_code != 202:
                report.problems.append(
                    f"round {round_no}: answered {response.status_code} {response.text[:200]}"
                )
                break
            uid = response.json()["taskUid"]
            time.sleep(delays[round_no % len(delays)])
            seen_lines = len(cluster.output)
            _, _, recovery = kill_and_recover(cluster, "scheduler")
            if recovery is None:
                report.problems.append(f"round {round_no}: the scheduler did not come back")
                break
            task = wait_task(client, uid, timeout=120)
            details = task.get("details", {})
            report.rounds.append(
                {
                    "round": round_no,
                    "task": uid,
                    "status": task["status"],
                    "indexed": details.get("indexedDocuments"),
                    "recovery_s": round(recovery, 2),
                    "resumed": any(
                        "resuming in-flight batch" in line for line in cluster.output[seen_lines:]
                    ),
                }
            )
            if task["status"] != "succeeded" or details.get("indexedDocuments") != documents:
                report.problems.append(
                    f"round {round_no}: task {uid} {task['status']} {details} {task['error']}"
                )
            stats = get_json(client, f"/indexes/{index}/stats")
            if stats.get("numberOfDocuments") != base + documents:
                report.problems.append(
                    f"round {round_no}: numberOfDocuments {stats.get('numberOfDocuments')}, "
                    f"expected {base + documents}"
                )
        page = get_json(client, f"/indexes/{index}/documents", {"limit": rounds * documents + 10})
        results = page["results"]
        report.documents = len(results)
        ids = Counter(doc["id"] for doc in results)
        expected = set(range(len(report.rounds) * documents))
        duplicated = [doc_id for doc_id, n in ids.items() if n > 1]
        missing = expected - set(ids)
        extra = set(ids) - expected
        if duplicated or missing or extra or page["total"] != len(expected):
            report.problems.append(
                f"documents: total {page['total']}, {len(duplicated)} duplicated, {len(missing)} missing, "
                f"{len(extra)} unexpected (e.g. {sorted(missing)[:5]} {duplicated[:5]})"
            )
        wrong = [
            doc
            for doc in results
            if doc != {"id": doc["id"], "title": f"doc {doc['id']}", "round": doc["id"] // documents}
        ]
        if wrong:
            report.problems.append(f"{len(wrong)} documents differ, e.g. {wrong[:3]}")
        if report.problems:
            report.log_excerpt = cluster.output[-60:]
    return report
