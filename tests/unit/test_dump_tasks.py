"""Task lines of a dump: the reference's internal spelling to Sift's records and back.

``data/reference_task_lines.json`` holds every line of a dump the reference 1.50 wrote after tasks of
each kind (``line``), beside the task as its ``GET /tasks`` showed it (``shown``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from common.dump.tasks import line_from_record, record_from_line
from scheduler.tasks import public_task

CASES: list[dict[str, Any]] = orjson.loads(
    (Path(__file__).parent / "data" / "reference_task_lines.json").read_bytes()
)


@pytest.mark.parametrize("case", CASES, ids=[str(case["line"]["uid"]) for case in CASES])
def test_a_reference_task_line_reads_as_the_reference_shows_it(case: dict[str, Any]) -> None:
    line, shown = case["line"], case["shown"]
    task = public_task(record_from_line(line))
    assert task["type"] == shown["type"]
    for name in ("indexUid", "error", "enqueuedAt"):
        assert task[name] == shown[name]
    if line["status"] == shown["status"] and shown["type"] != "dumpCreation":
        # Tasks finished when the dump was written; the dump's own task is written before its end.
        assert task.get("details") == shown["details"]
        assert (task["batchUid"], task["startedAt"], task["finishedAt"]) == (
            shown["batchUid"],
            shown["startedAt"],
            shown["finishedAt"],
        )


@pytest.mark.parametrize("case", CASES, ids=[str(case["line"]["uid"]) for case in CASES])
def test_a_task_line_is_written_back_as_the_reference_wrote_it(case: dict[str, Any]) -> None:
    line = case["line"]
    assert line_from_record(record_from_line(line)) == line
