"""The ``sift`` command: ``serve`` (the cluster), ``gateway``, ``shard --id K``, ``scheduler``, ``config``."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import orjson

from common.config import Config, ConfigError, load_config
from common.data_lock import DataDirectoryInUse, join_data_directory
from common.data_version import DataVersionError
from common.layout import DataLayout
from common.logging import configure_logging, get_logger
from common.process import die_with_parent
from sift.launcher import CLUSTER_CONFIG_ENV, LAUNCHER_PID_ENV, Launcher


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        subcommand, config, shard_id, warnings = _resolve(args)
    except ConfigError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1
    process = (
        f"shard-{shard_id}"
        if subcommand == "shard"
        else ("launcher" if subcommand == "serve" else subcommand)
    )
    configure_logging(process, config.log_level, config.experimental_logs_mode)
    log = get_logger("sift")
    for warning in warnings:
        log.warning(warning)
    if subcommand == "config":
        print(orjson.dumps(config.public_dict(), option=orjson.OPT_INDENT_2).decode())
        return 0
    if subcommand == "serve":
        return Launcher(config).run()
    _watch_launcher()
    if LAUNCHER_PID_ENV not in os.environ:
        try:
            _run_on_its_own(process, config)
        except (DataDirectoryInUse, DataVersionError) as error:
            print(f"Error: {error}", file=sys.stderr)
            return 1
    layout = DataLayout(config.db_path)
    if subcommand == "gateway":
        from gateway.app import serve as serve_gateway

        serve_gateway(config)
    elif subcommand == "shard":
        # One BLAS thread per shard (set before numpy loads; an explicit setting wins): shards already
        # take a core each, and a second thread contending for it made a nearest-neighbour product
        # over movies' 1,688 vectors cost 6-20 ms instead of 0.7 (median, in process, load avg ~19).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        from common.outbound import AllowedNetworks
        from shard.embedding import configure_outbound
        from shard.server import serve as serve_shard

        assert shard_id is not None
        configure_outbound(AllowedNetworks.from_option(config.experimental_allowed_ip_networks))
        cache_budget = config.read_cache_size // config.shards
        embedding_cache = config.experimental_embedding_cache_entries
        upgrade = config.experimental_dumpless_upgrade
        results_budget = config.result_cache_size // config.shards
        _run_async(
            serve_shard(
                layout, shard_id, cache_budget, config.shards, embedding_cache, upgrade, results_budget
            )
        )
    else:
        from scheduler.process import serve as serve_scheduler

        _run_async(serve_scheduler(config))
    return 0


def _resolve(args: list[str]) -> tuple[str, Config, int | None, list[str]]:
    """Children of ``sift serve`` take the launcher's effective config; others parse options."""
    inherited = os.environ.get(CLUSTER_CONFIG_ENV)
    if inherited and args and args[0] in ("gateway", "shard", "scheduler"):
        shard_id = int(args[args.index("--id") + 1]) if args[0] == "shard" else None
        return args[0], Config.from_json(inherited), shard_id, []
    loaded = load_config(args, os.environ)
    return loaded.subcommand, loaded.config, loaded.shard_id, loaded.warnings


def _watch_launcher() -> None:
    """A child of ``sift serve`` dies with it, even on ``kill -9`` of the launcher."""
    launcher_pid = os.environ.get(LAUNCHER_PID_ENV)
    if launcher_pid is None:
        return
    die_with_parent()
    if os.getppid() != int(launcher_pid):
        sys.exit(0)


def _run_on_its_own(process: str, config: Config) -> None:
    """What the launcher does for its children, for a role started without it (supervisord): hold
    the data directory (``common/data_lock.py``; the locks stay held until the process exits) and, in
    the scheduler, check the data format."""
    join_data_directory(config.db_path, process)
    if process == "scheduler":
        from sift.upgrade import check_data_format

        check_data_format(config)


def _run_async(coroutine: object) -> None:
    import uvloop

    uvloop.run(coroutine)  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main())
