"""``--experimental-logs-mode`` and ``--log-level``: every line names its process."""

from __future__ import annotations

import orjson

from tests.support.cluster import RunningCluster


def test_json_logs_name_the_process_of_every_line() -> None:
    with RunningCluster("--experimental-logs-mode", "json", shards=2) as running:
        lines = list(running.output)
    records = [orjson.loads(line) for line in lines if line.startswith("{")]
    assert len(records) == len(lines), f"non-JSON log lines: {[x for x in lines if not x.startswith('{')]}"
    processes = {record["process"] for record in records}
    assert {"launcher", "scheduler", "shard-0", "shard-1", "gateway"} <= processes
    assert all({"event", "level", "timestamp"} <= record.keys() for record in records)


def test_log_level_error_silences_info_lines() -> None:
    with RunningCluster("--log-level", "ERROR", shards=1) as running:
        lines = list(running.output)
    assert not [line for line in lines if "[info" in line or "[warning" in line], lines


def test_human_logs_are_the_default() -> None:
    with RunningCluster(shards=1) as running:
        lines = list(running.output)
    assert any("[info" in line and "process=shard-0" in line for line in lines), lines
