"""How much disk an LMDB environment takes, for the stats routes (core.md §3.1).

``databaseSize`` is the length of the data file; ``usedDatabaseSize`` the pages that hold live data
(both meta pages, the main tree and every named database's branch, leaf and overflow pages). The
difference is free pages: copy-on-write leaves them behind, and later writes reuse them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import lmdb

_META_PAGES = 2


def environment_sizes(env: lmdb.Environment, databases: Iterable[Any]) -> dict[str, int]:
    """``{"databaseSize", "usedDatabaseSize"}`` in bytes; ``databases``: every named database."""
    main = env.stat()
    with env.begin() as txn:
        pages = _META_PAGES + _pages(main) + sum(_pages(txn.stat(db)) for db in databases)
    file_size = os.stat(os.path.join(env.path(), "data.mdb")).st_size
    return {"databaseSize": file_size, "usedDatabaseSize": pages * int(main["psize"])}


def _pages(stat: Mapping[str, Any]) -> int:
    return int(stat["branch_pages"]) + int(stat["leaf_pages"]) + int(stat["overflow_pages"])
