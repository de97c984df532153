"""The effective configuration as one typed, immutable value, and its JSON form.

The launcher hands the configuration to its child processes as JSON, so the children never
re-read the command line, the environment or the config file and cannot disagree with it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from common.config.options import BY_NAME, Kind

REDACTED = "[redacted]"


class ConfigError(Exception):
    """An invalid launch; the message says what is wrong and where it was set."""


@dataclass(frozen=True, kw_only=True)
class Config:
    """One attribute per option of :data:`common.config.options.OPTIONS`, same names, same order."""

    db_path: Path
    env: str
    http_addr: str
    master_key: str | None
    no_analytics: bool
    http_payload_size_limit: int
    log_level: str
    max_indexing_memory: int
    max_indexing_threads: int
    read_cache_size: int
    result_cache_size: int
    task_webhook_url: str | None
    task_webhook_authorization_header: str | None
    task_webhook_signing_secret: str | None
    webhook_timeout: int
    webhook_retry_duration: int
    dump_dir: Path
    import_dump: Path | None
    ignore_missing_dump: bool
    ignore_dump_if_db_exists: bool
    schedule_snapshot: int | None
    snapshot_dir: Path
    import_snapshot: Path | None
    ignore_missing_snapshot: bool
    ignore_snapshot_if_db_exists: bool
    config_file_path: Path
    experimental_enable_metrics: bool
    experimental_enable_logs_route: bool
    experimental_replication_parameters: bool
    experimental_reduce_indexing_memory_usage: bool
    experimental_contains_filter: bool
    experimental_dumpless_upgrade: bool
    experimental_no_snapshot_compaction: bool
    experimental_no_edition_2024_for_settings: bool
    experimental_no_edition_2024_for_dumps: bool
    experimental_logs_mode: str
    experimental_max_number_of_batched_tasks: int | None
    experimental_limit_batched_tasks_total_size: int
    experimental_search_queue_size: int
    experimental_drop_search_after: int
    experimental_nb_searches_per_core: int
    experimental_embedding_cache_entries: int
    experimental_allowed_ip_networks: str | None
    experimental_personalization_api_key: str | None
    experimental_personalization_url: str
    experimental_personalization_model: str
    ssl_cert_path: Path | None
    ssl_key_path: Path | None
    ssl_auth_path: Path | None
    ssl_ocsp_path: Path | None
    ssl_require_auth: bool
    ssl_resumption: bool
    ssl_tickets: bool
    objstore_bucket_url: str | None
    objstore_bucket_region: str | None
    objstore_bucket_name: str | None
    objstore_snapshot_prefix: str | None
    objstore_access_key: str | None
    objstore_secret_key: str | None
    experimental_objstore_role_arn: str | None
    experimental_objstore_web_identity_token_file: Path | None
    experimental_objstore_max_in_flight_parts: int
    experimental_objstore_compression_level: int
    experimental_objstore_signature_duration_seconds: int
    experimental_objstore_multipart_part_size: int
    shards: int

    def http_host_port(self) -> tuple[str, int]:
        """``http_addr`` split for binding; IPv6 brackets removed (``[::1]:7700`` -> ``("::1", 7700)``)."""
        host, _, port = self.http_addr.rpartition(":")
        return host.strip("[]"), int(port)

    def public_dict(self) -> dict[str, object]:
        """Every option as JSON-ready values, secrets masked: safe to log or serve."""
        return {
            name: REDACTED if value is not None and BY_NAME[name].secret else value
            for name, value in self._plain().items()
        }

    def to_json(self) -> str:
        """The full configuration, secrets included: only for trusted child processes."""
        return json.dumps(self._plain())

    @classmethod
    def from_json(cls, text: str) -> Config:
        """Inverse of :meth:`to_json`."""
        data = json.loads(text)
        expected = {field.name for field in dataclasses.fields(cls)}
        if not isinstance(data, dict) or data.keys() != expected:
            keys = set(data) if isinstance(data, dict) else set()
            raise ConfigError(
                f"The serialized configuration does not match this version of Sift "
                f"(missing: {sorted(expected - keys)}, unknown: {sorted(keys - expected)})."
            )
        for name, value in data.items():
            if value is not None and BY_NAME[name].kind is Kind.PATH:
                data[name] = Path(value)
        return cls(**data)

    def _plain(self) -> dict[str, object]:
        return {
            field.name: str(value) if isinstance(value, Path) else value
            for field in dataclasses.fields(self)
            for value in (getattr(self, field.name),)
        }


@dataclass(frozen=True)
class LoadedConfig:
    """What :func:`common.config.load_config` returns for one launch."""

    subcommand: str
    config: Config
    warnings: list[str]
    shard_id: int | None = None
