"""Merges the layers of configuration into one :class:`Config`: CLI > environment > file > default.

Every layer is read and checked in full, even where a higher layer overrides it, so a typo in the
config file is reported on the launch that introduced it rather than on the day the flag masking
it is removed.
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from common.config.cli import CommandLine, parse_command_line
from common.config.model import Config, ConfigError, LoadedConfig
from common.config.options import BY_KEY, BY_NAME, OPTIONS, Kind, Option, read_text, read_toml
from common.config.rules import check_launch_rules
from common.layout import DataLayout
from common.snapshot_archive import SnapshotError, read_manifest

# A batch's JSON payload becomes Python objects about twenty times its size in the scheduler, and again
# spread over the shards, so the reference's 10 GiB cap would exhaust memory. At 64 MiB the scheduler
# peaked at 1.35 GiB on the 1M-document benchmark; 32 MiB batches index as fast (per-batch cost is small).
_BATCH_SIZE_CAP = 32 * 1024**2

# One layer: option name -> (typed value, where it was set, for messages).
_Layer = dict[str, tuple[Any, str]]


def load_config(
    argv: Sequence[str],
    environ: Mapping[str, str],
    *,
    cwd: Path | None = None,
    total_memory: int | None = None,
    cpu_count: int | None = None,
) -> LoadedConfig:
    """Read the launch configuration; ``argv`` excludes the program name and starts with the subcommand.

    ``cwd``, ``total_memory`` and ``cpu_count`` default to this machine's. Raises
    :class:`ConfigError` for any invalid launch; ``--help`` prints the help and exits, as usual.
    """
    cwd = (cwd or Path.cwd()).absolute()
    total_memory = total_memory or _total_memory()
    cpu_count = cpu_count or len(os.sched_getaffinity(0))
    command_line = parse_command_line(argv)
    cli = _read_cli(command_line)
    env = _read_env(environ)
    file = _read_config_file(cli, env, cwd)

    values: dict[str, Any] = {option.name: option.default for option in OPTIONS}
    origins = {option.name: "the default" for option in OPTIONS}
    for layer in (file, env, cli):
        for name, (value, origin) in layer.items():
            values[name] = value
            origins[name] = origin
    for option in OPTIONS:
        if option.kind is Kind.PATH and values[option.name] is not None:
            values[option.name] = cwd / values[option.name]

    warnings = _derive_defaults(values, origins, total_memory, cpu_count)
    config = Config(**values)
    warnings += check_launch_rules(config, origins, total_memory)
    shard_id = _read_shard_id(command_line.shard_id, config.shards, origins["shards"])
    return LoadedConfig(command_line.subcommand, config, warnings, shard_id)


def _read_cli(command_line: CommandLine) -> _Layer:
    layer: _Layer = {}
    for name, raw in command_line.values.items():
        option = BY_NAME[name]
        where = f"command-line option `{command_line.spelled.get(name, option.flag)}`"
        layer[name] = (raw if isinstance(raw, bool) else _read(option, raw, where, read_text), where)
    return layer


def _read_env(environ: Mapping[str, str]) -> _Layer:
    """Unknown ``SEARCH_*`` variables are ignored: the environment is shared with other software.

    Empty variables count as unset, as ``VAR=${UNSET}`` in compose files produces them.
    """
    layer: _Layer = {}
    for option in OPTIONS:
        for var in option.env_vars:
            raw = environ.get(var)
            if raw:
                where = f"environment variable `{var}`"
                _refuse_twice(layer, option, where)
                layer[option.name] = (_read(option, raw, where, read_text), where)
    return layer


def _refuse_twice(layer: _Layer, option: Option, where: str) -> None:
    """An option and its alias set in one layer: neither can be said to win."""
    if option.name in layer:
        raise ConfigError(
            f"`{option.name}` is set twice, by {layer[option.name][1]} and by {where} (another spelling of "
            f"the same option): keep one."
        )


def _read_config_file(cli: _Layer, env: _Layer, cwd: Path) -> _Layer:
    """The default ``./config.toml`` may be absent; a path the user chose must exist."""
    chosen = cli.get("config_file_path") or env.get("config_file_path")
    path = cwd / (chosen[0] if chosen else cast(Path, BY_NAME["config_file_path"].default))
    if chosen is None and not path.exists():
        return {}
    try:
        with path.open("rb") as file:
            table = tomllib.load(file)
    except (OSError, tomllib.TOMLDecodeError) as error:
        given = f" (given by {chosen[1]})" if chosen else ""
        reason = error.strerror if isinstance(error, OSError) else error
        raise ConfigError(f"Cannot read the config file `{path}`{given}: {reason}.") from error
    layer: _Layer = {}
    for key, value in table.items():
        option = BY_KEY.get(key)
        if key == "config_file_path":
            raise ConfigError(
                f"The config file `{path}` sets `config_file_path`, which only the command line "
                f"(`--config-file-path`) or the environment (`SEARCH_CONFIG_FILE_PATH`) can set."
            )
        if option is None:
            close = difflib.get_close_matches(key, BY_KEY, n=1)
            hint = f" Did you mean `{close[0]}`?" if close else ""
            raise ConfigError(f"Unknown key `{key}` in the config file `{path}`.{hint}")
        where = f"key `{key}` of the config file `{path}`"
        _refuse_twice(layer, option, where)
        layer[option.name] = (_read(option, value, where, read_toml), where)
    return layer


def _read(option: Option, raw: Any, where: str, reader: Callable[[Option, Any], object]) -> object:
    try:
        return reader(option, raw)
    except ValueError as error:
        shown = raw if isinstance(raw, str) else json.dumps(raw, default=str)
        raise ConfigError(f"Invalid value `{shown}` for `{option.name}`, set by {where}: {error}.") from None


def _derive_defaults(
    values: dict[str, Any], origins: Mapping[str, str], total_memory: int, cpus: int
) -> list[str]:
    """Fill the defaults that depend on the machine, and cap the thread count to it."""
    warnings: list[str] = []
    if values["max_indexing_memory"] is None:
        values["max_indexing_memory"] = total_memory * 2 // 3
    if values["max_indexing_threads"] is None:
        values["max_indexing_threads"] = max(1, cpus // 2)
    elif values["max_indexing_threads"] > cpus:
        warnings.append(
            f"`max_indexing_threads` is {values['max_indexing_threads']} (set by "
            f"{origins['max_indexing_threads']}) but this machine has {cpus} cores; using {cpus}."
        )
        values["max_indexing_threads"] = cpus
    if values["experimental_limit_batched_tasks_total_size"] is None:
        values["experimental_limit_batched_tasks_total_size"] = min(
            values["max_indexing_memory"] // 2, _BATCH_SIZE_CAP
        )
    _keep_shard_count(values, origins, cpus)
    if values["read_cache_size"] is None:
        values["read_cache_size"] = total_memory // 8
    return warnings


def _keep_shard_count(values: dict[str, Any], origins: Mapping[str, str], cpus: int) -> None:
    """A document's shard is a hash of its primary key over the shard count, so an existing data
    directory keeps the count it was created with: it is the default there, and another is refused
    (restarting 2 shards' data on 1 would hide half the documents and duplicate the replaced ones).
    A new data directory restored from ``import_snapshot`` takes the snapshot's count likewise."""
    held = DataLayout(values["db_path"]).existing_shards()
    holder = f"The data directory `{values['db_path']}` holds"
    snapshot = values["import_snapshot"]
    if not held and snapshot is not None and Path(snapshot).is_file():
        try:
            held = read_manifest(Path(snapshot)).shards
        except SnapshotError as error:
            raise ConfigError(str(error)) from error
        holder = f"The snapshot `{snapshot}` (set by {origins['import_snapshot']}) holds"
    if values["shards"] is None:
        values["shards"] = held or cpus
    elif held and values["shards"] != held:
        raise ConfigError(
            f"{holder} {held} shards, but `shards` is "
            f"{values['shards']} (set by {origins['shards']}). Documents are placed on shards by a hash "
            f"of their primary key, so an existing data directory keeps its shard count: start with "
            f"{held} shards (changing the count of existing data is not supported)."
        )


def _read_shard_id(raw: str | None, shards: int, shards_origin: str) -> int | None:
    if raw is None:
        return None
    if not raw.strip().isdecimal() or not 0 <= int(raw) < shards:
        raise ConfigError(
            f"Invalid value `{raw}` for command-line option `--id`: expected a shard number from 0 to "
            f"{shards - 1}, as there are {shards} shards (`shards` set by {shards_origin})."
        )
    return int(raw)


def _total_memory() -> int:
    """Physical memory, or the cgroup (container) limit when that is lower."""
    try:
        with open("/proc/meminfo") as meminfo:
            total = next(int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemTotal:"))
    except (OSError, StopIteration, ValueError):
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdecimal() else total
