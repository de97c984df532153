"""The option table, the single source of truth for every launch option, and its value readers.

The CLI parser, the environment and config-file readers, ``--help`` and the masking of secrets are
all derived from :data:`OPTIONS`, so adding an option here is the only way to add an option; the
readers turn a raw value into the typed value of the option's :class:`Kind`.
"""

from __future__ import annotations

import enum
import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from common.config.sizes import format_size, parse_size
from common.outbound import parse_ip_networks

ENV_PREFIX = "SEARCH_"


class Kind(enum.Enum):
    """How a raw value (CLI text, env text or TOML value) is read and checked."""

    PATH = "PATH"
    TEXT = "TEXT"
    INT = "N"
    SIZE = "SIZE"
    FLAG = "FLAG"
    CHOICE = "CHOICE"
    ADDR = "HOST:PORT"
    URL = "URL"
    SNAPSHOT = "SECONDS"
    NETWORKS = "CIDR,..."


@dataclass(frozen=True)
class Option:
    """One option; ``default`` is already typed, ``derived`` explains a default computed at launch."""

    name: str
    kind: Kind
    help: str
    default: object = None
    derived: str | None = None
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    secret: bool = False
    aliases: tuple[str, ...] = ()
    """Other names accepted everywhere (flag, environment, config file): earlier spellings."""

    @property
    def flag(self) -> str:
        return _flag_of(self.name)

    @property
    def env_var(self) -> str:
        return ENV_PREFIX + self.name.upper()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(_flag_of(name) for name in self.names)

    @property
    def env_vars(self) -> tuple[str, ...]:
        return tuple(ENV_PREFIX + name.upper() for name in self.names)


def _flag_of(name: str) -> str:
    return "--" + name.replace("_", "-")


def _flag(name: str, help: str) -> Option:
    return Option(name, Kind.FLAG, help, default=False)


# Seconds between scheduled snapshots when enabled without a value (Meilisearch's default).
DEFAULT_SNAPSHOT_INTERVAL = 86400

# fmt: off
OPTIONS: tuple[Option, ...] = (
    Option("db_path", Kind.PATH, "Directory holding the databases.", default=Path("data.ms")),
    Option(
        "env", Kind.CHOICE, "Production requires a master key.", default="development",
        choices=("development", "production"),
    ),
    Option("http_addr", Kind.ADDR, "Address the HTTP server listens on.", default="localhost:7700"),
    Option("master_key", Kind.TEXT, "Key protecting every route (16 bytes or more).", secret=True),
    _flag("no_analytics", "Accepted for compatibility; Sift never sends analytics."),
    Option(
        "http_payload_size_limit", Kind.SIZE, "Largest accepted request body (decoded).",
        default=100_000_000, minimum=1,
    ),
    Option(
        "log_level", Kind.CHOICE, "Log verbosity.", default="INFO",
        choices=("OFF", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"),
    ),
    Option(
        "max_indexing_memory", Kind.SIZE, "Memory budget for indexing.",
        derived="two thirds of the total memory", minimum=1,
    ),
    Option(
        "max_indexing_threads", Kind.INT, "Threads used for indexing (capped to the core count).",
        derived="half the cores, at least 1", minimum=1,
    ),
    Option(
        "read_cache_size", Kind.SIZE,
        "Memory the shards keep, together, for decoded index data between searches (0: none).",
        derived="an eighth of the total memory", minimum=0,
    ),
    Option(
        "result_cache_size", Kind.SIZE,
        "Memory the shards keep, together, for search replies until the next batch (0: none).",
        default=64 * 1024**2, minimum=0,
    ),
    Option("task_webhook_url", Kind.URL, "URL notified (POST) when tasks finish."),
    Option(
        "task_webhook_authorization_header", Kind.TEXT, "Authorization header sent to the task webhook.",
        secret=True,
    ),
    Option(
        "task_webhook_signing_secret", Kind.TEXT,
        "Key of the `X-Sift-Signature` HMAC-SHA256 sent to the task webhook; no signature by default.",
        secret=True,
    ),
    Option(
        "webhook_timeout", Kind.INT, "Seconds one webhook request may take before it is retried.",
        default=30, minimum=1,
    ),
    Option(
        "webhook_retry_duration", Kind.INT,
        "Seconds after a batch finished during which its webhook notifications are retried.",
        default=3600, minimum=0,
    ),
    Option("dump_dir", Kind.PATH, "Directory where dumps are written.", default=Path("dumps")),
    Option("import_dump", Kind.PATH, "Dump file imported at launch."),
    _flag("ignore_missing_dump", "Launch anyway when the `--import-dump` file is missing."),
    _flag("ignore_dump_if_db_exists", "Skip `--import-dump` when a database already exists."),
    Option(
        "schedule_snapshot", Kind.SNAPSHOT,
        f"Take a snapshot every SECONDS (alone: every {DEFAULT_SNAPSHOT_INTERVAL}); disabled by default.",
        minimum=1,
    ),
    Option("snapshot_dir", Kind.PATH, "Directory where snapshots are written.", default=Path("snapshots")),
    Option("import_snapshot", Kind.PATH, "Snapshot imported at launch."),
    _flag("ignore_missing_snapshot", "Launch anyway when the `--import-snapshot` file is missing."),
    _flag("ignore_snapshot_if_db_exists", "Skip `--import-snapshot` when a database already exists."),
    Option(
        "config_file_path", Kind.PATH, "TOML file read for options not given on the CLI or environment.",
        default=Path("config.toml"),
    ),
    _flag("experimental_enable_metrics", "Serve Prometheus metrics on `/metrics`."),
    _flag("experimental_enable_logs_route", "Serve the `/logs` routes."),
    _flag("experimental_replication_parameters", "Accept replication-oriented task parameters."),
    _flag("experimental_reduce_indexing_memory_usage", "Trade indexing speed for memory."),
    _flag("experimental_contains_filter", "Enable the `CONTAINS` filter operator."),
    Option(
        "experimental_dumpless_upgrade", Kind.FLAG,
        "Upgrade a data directory written by an older Sift in place (an `upgradeDatabase` task) instead of "
        "refusing to start.", default=False, aliases=("upgrade_db",),
    ),
    _flag("experimental_no_snapshot_compaction", "Copy databases into snapshots without compacting."),
    _flag("experimental_no_edition_2024_for_settings", "Index settings changes with the legacy pipeline."),
    _flag(
        "experimental_no_edition_2024_for_dumps",
        "Accepted for compatibility; changes nothing: Sift imports dumps with its one indexer.",
    ),
    Option(
        "experimental_logs_mode", Kind.CHOICE, "Log line format.", default="human", choices=("human", "json"),
    ),
    Option(
        "experimental_max_number_of_batched_tasks", Kind.INT, "Most tasks per batch; unlimited by default.",
        minimum=1,
    ),
    Option(
        "experimental_limit_batched_tasks_total_size", Kind.SIZE, "Largest total payload of one batch.",
        derived="half of --max-indexing-memory, at most 32 MiB", minimum=1,
    ),
    Option(
        "experimental_search_queue_size", Kind.INT, "Searches waiting for a worker before refusal.",
        default=1000, minimum=1,
    ),
    Option(
        "experimental_drop_search_after", Kind.INT, "Seconds a queued search may wait before it is dropped.",
        default=60, minimum=1,
    ),
    Option(
        "experimental_nb_searches_per_core", Kind.INT, "Concurrent searches per core.", default=4, minimum=1,
    ),
    Option(
        "experimental_embedding_cache_entries", Kind.INT, "Embeddings cached per embedder (0: no cache).",
        default=0, minimum=0,
    ),
    Option(
        "experimental_allowed_ip_networks", Kind.NETWORKS,
        "Non-public networks outbound requests (webhooks) may reach: comma-separated CIDRs, or `any`.",
    ),
    Option(
        "experimental_personalization_api_key", Kind.TEXT,
        "Key of the reranking provider; enables the `personalize` search parameter.", secret=True,
    ),
    Option(
        "experimental_personalization_url", Kind.URL,
        "Base URL of the reranking provider, which speaks Cohere's rerank API (`POST <url>/v2/rerank`).",
        default="https://api.cohere.com",
    ),
    Option(
        "experimental_personalization_model", Kind.TEXT, "Reranking model asked of the provider.",
        default="rerank-v3.5",
    ),
    Option("ssl_cert_path", Kind.PATH, "TLS certificate chain (PEM); needs `--ssl-key-path`."),
    Option("ssl_key_path", Kind.PATH, "TLS private key (PEM); needs `--ssl-cert-path`."),
    Option("ssl_auth_path", Kind.PATH, "CA certificates that client certificates must chain to."),
    Option("ssl_ocsp_path", Kind.PATH, "DER-encoded OCSP response stapled to the handshake."),
    _flag("ssl_require_auth", "Refuse clients without a certificate; needs `--ssl-auth-path`."),
    _flag("ssl_resumption", "Allow TLS session resumption."),
    _flag("ssl_tickets", "Allow TLS session tickets."),
    Option(
        "objstore_bucket_url", Kind.URL, "Object-storage endpoint snapshots are uploaded to.",
        aliases=("experimental_s3_bucket_url", "s3_bucket_url"),
    ),
    Option(
        "objstore_bucket_region", Kind.TEXT, "Object-storage region, such as `us-east-1`.",
        aliases=("experimental_s3_bucket_region", "s3_bucket_region"),
    ),
    Option(
        "objstore_bucket_name", Kind.TEXT, "Bucket receiving snapshots.",
        aliases=("experimental_s3_bucket_name", "s3_bucket_name"),
    ),
    Option(
        "objstore_snapshot_prefix", Kind.TEXT, "Key prefix of snapshots inside the bucket (`/`-separated).",
        aliases=("experimental_s3_snapshot_prefix", "s3_snapshot_prefix"),
    ),
    Option(
        "objstore_access_key", Kind.TEXT,
        "Object-storage access key; excludes `--experimental-objstore-role-arn`.",
        aliases=("experimental_s3_access_key", "s3_access_key"),
    ),
    Option(
        "objstore_secret_key", Kind.TEXT,
        "Object-storage secret key; excludes `--experimental-objstore-role-arn`.", secret=True,
        aliases=("experimental_s3_secret_key", "s3_secret_key"),
    ),
    Option(
        "experimental_objstore_role_arn", Kind.TEXT,
        "IAM role assumed with the web identity token (STS AssumeRoleWithWebIdentity); excludes the "
        "access and secret keys.",
        aliases=("experimental_s3_role_arn",),
    ),
    Option(
        "experimental_objstore_web_identity_token_file", Kind.PATH,
        "File holding the web identity token; goes with `--experimental-objstore-role-arn`.",
        aliases=("experimental_s3_web_identity_token_file",),
    ),
    Option(
        "experimental_objstore_max_in_flight_parts", Kind.INT,
        "Multipart parts uploaded at once (each held in memory while it is sent).",
        default=10, minimum=1, aliases=("experimental_s3_max_in_flight_parts",),
    ),
    Option(
        "experimental_objstore_compression_level", Kind.INT,
        "Zstandard level of uploaded snapshots (0: uploaded as they are).",
        default=0, minimum=0, maximum=22, aliases=("experimental_s3_compression_level",),
    ),
    Option(
        "experimental_objstore_signature_duration_seconds", Kind.INT,
        "Lifetime of each presigned part upload request.",
        default=28800, minimum=1, maximum=604800, aliases=("experimental_s3_signature_duration_seconds",),
    ),
    Option(
        "experimental_objstore_multipart_part_size", Kind.SIZE,
        "Size of each multipart part, from 5 MiB to 5 GiB (raised when a snapshot would need more than "
        "10,000 parts).",
        default=375 * 1024**2, minimum=5 * 1024**2, maximum=5 * 1024**3,
        aliases=("experimental_s3_multipart_part_size",),
    ),
    Option("shards", Kind.INT, "Number of shard worker processes.", derived="the number of cores", minimum=1),
)
# fmt: on

BY_NAME: dict[str, Option] = {option.name: option for option in OPTIONS}
BY_KEY: dict[str, Option] = {name: option for option in OPTIONS for name in option.names}
"""Config-file keys, aliases included."""
BY_FLAG: dict[str, Option] = {flag: option for option in OPTIONS for flag in option.flags}
BY_ENV_VAR: dict[str, Option] = {var: option for option in OPTIONS for var in option.env_vars}


# Reading raw values. CLI and environment values are text; config-file values are TOML values.
# Readers raise ValueError with a reason; the loader adds which option and which layer.


def read_text(option: Option, raw: str) -> object:
    """Read a CLI or environment value; flags accept ``true``/``false``/``1``/``0``."""
    kind = option.kind
    if kind is Kind.FLAG:
        return _read_bool(raw)
    if kind is Kind.SNAPSHOT:
        if raw.strip().lower() in ("true", "false"):
            return DEFAULT_SNAPSHOT_INTERVAL if _read_bool(raw) else None
        return _bounded(option, _read_int(raw))
    if kind is Kind.INT:
        return _bounded(option, _read_int(raw))
    if kind is Kind.SIZE:
        return _bounded(option, parse_size(raw))
    if not raw:
        raise ValueError("the value must not be empty")
    if kind is Kind.CHOICE:
        for choice in option.choices:
            if raw.lower() == choice.lower():
                return choice
        raise ValueError("expected one of " + ", ".join(f"`{choice}`" for choice in option.choices))
    if kind is Kind.PATH:
        return Path(raw)
    if kind is Kind.NETWORKS:
        parse_ip_networks(raw)
    elif kind is Kind.ADDR:
        _check_addr(raw)
    elif kind is Kind.URL:
        _check_url(raw)
    return raw


def read_toml(option: Option, value: object) -> object:
    """Read a config-file value, insisting on the TOML type a person would naturally write."""
    kind = option.kind
    if kind is Kind.FLAG:
        if not isinstance(value, bool):
            raise ValueError("expected a boolean (`true` or `false`)")
        return value
    if isinstance(value, bool):
        if kind is Kind.SNAPSHOT:
            return DEFAULT_SNAPSHOT_INTERVAL if value else None
        raise ValueError(f"expected {_TOML_EXPECTED[kind]}, not a boolean")
    if isinstance(value, int) and kind in (Kind.INT, Kind.SNAPSHOT, Kind.SIZE):
        return _bounded(option, parse_size(value) if kind is Kind.SIZE else value)
    if isinstance(value, str) and kind not in (Kind.INT, Kind.SNAPSHOT):
        return read_text(option, value)
    raise ValueError(f"expected {_TOML_EXPECTED[kind]}")


_BOOLS = {"true": True, "1": True, "false": False, "0": False}
_INT = re.compile(r"[+-]?[0-9]+")
_PORT = re.compile(r"[0-9]{1,5}")
_TOML_EXPECTED = {
    Kind.PATH: "a string",
    Kind.TEXT: "a string",
    Kind.INT: "an integer",
    Kind.SIZE: "a size (an integer number of bytes, or a string such as `100MB`)",
    Kind.CHOICE: "a string",
    Kind.ADDR: "a string such as `localhost:7700`",
    Kind.URL: "a string URL",
    Kind.SNAPSHOT: "a boolean or an integer number of seconds",
    Kind.NETWORKS: "a string such as `10.0.0.0/8,192.168.0.0/16` or `any`",
}


def _read_bool(raw: str) -> bool:
    try:
        return _BOOLS[raw.strip().lower()]
    except KeyError:
        raise ValueError("expected `true`, `false`, `1` or `0`") from None


def _read_int(raw: str) -> int:
    if not _INT.fullmatch(raw.strip()):
        raise ValueError("expected an integer")
    return int(raw)


def _bounded(option: Option, number: int) -> int:
    low, high = option.minimum, option.maximum
    if (low is not None and number < low) or (high is not None and number > high):
        def shown(bound: int | None) -> str:
            return format_size(bound) if option.kind is Kind.SIZE and bound is not None else str(bound)

        if high is None:
            raise ValueError(f"must be at least {shown(low)}")
        raise ValueError(f"must be between {shown(low)} and {shown(high)}")
    return number


def _check_addr(raw: str) -> None:
    host, separator, port = raw.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        valid_host = _is_ipv6(host[1:-1])
    else:
        valid_host = bool(host) and ":" not in host and not any(char.isspace() for char in host)
    if not separator or not valid_host:
        raise ValueError("expected `HOST:PORT`, such as `localhost:7700`, `0.0.0.0:7700` or `[::1]:7700`")
    if not _PORT.fullmatch(port) or int(port) > 65535:
        raise ValueError("the port must be a number from 0 to 65535")


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _check_url(raw: str) -> None:
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(char.isspace() for char in raw):
        raise ValueError("expected an `http://` or `https://` URL with a host")
    try:
        parts.port  # noqa: B018 -- urllib checks the port only when it is read
    except ValueError:
        raise ValueError("the port of the URL must be a number from 0 to 65535") from None
