"""Task statuses and types (core.md §3.4.2-3.4.3): the words the gateway validates filters with and the
scheduler stores, so both roles take them from here."""

from __future__ import annotations

ENQUEUED, PROCESSING, SUCCEEDED, FAILED, CANCELED = (
    "enqueued",
    "processing",
    "succeeded",
    "failed",
    "canceled",
)
STATUSES = (ENQUEUED, PROCESSING, SUCCEEDED, FAILED, CANCELED)
FINISHED = (SUCCEEDED, FAILED, CANCELED)

TYPES = (
    "documentAdditionOrUpdate",
    "documentEdition",
    "documentDeletion",
    "settingsUpdate",
    "indexCreation",
    "indexDeletion",
    "indexUpdate",
    "indexSwap",
    "taskCancelation",
    "taskDeletion",
    "dumpCreation",
    "snapshotCreation",
    "export",
    "upgradeDatabase",
    "indexCompaction",
    "networkTopologyChange",
    "dsrUpdate",
    "dsrClear",
)
