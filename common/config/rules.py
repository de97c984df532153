"""Launch rules: combinations of options that are refused, or accepted with a warning.

Each option is valid on its own by the time these run; what is checked here is that the options
make sense together, and messages say which layer set each option involved.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from common.config.model import Config, ConfigError
from common.config.sizes import format_size
from common.tls import server_context

_MIN_MASTER_KEY_BYTES = 16
_S3_CREDENTIALS = (
    "experimental_s3_bucket_url",
    "experimental_s3_bucket_region",
    "experimental_s3_bucket_name",
    "experimental_s3_access_key",
    "experimental_s3_secret_key",
)


def check_launch_rules(config: Config, origins: Mapping[str, str], total_memory: int) -> list[str]:
    """Raise :class:`ConfigError` for the first refused combination; return the warnings."""

    def named(name: str) -> str:
        return f"`{name}` (set by {origins[name]})"

    for given, needed in (
        ("ignore_missing_dump", "import_dump"),
        ("ignore_dump_if_db_exists", "import_dump"),
        ("ignore_missing_snapshot", "import_snapshot"),
        ("ignore_snapshot_if_db_exists", "import_snapshot"),
        ("ssl_require_auth", "ssl_auth_path"),
        ("ssl_cert_path", "ssl_key_path"),
        ("ssl_key_path", "ssl_cert_path"),
    ):
        if getattr(config, given) and getattr(config, needed) is None:
            raise ConfigError(f"{named(given)} requires `{needed}`, which is not set.")
    if config.import_dump is not None and config.import_snapshot is not None:
        raise ConfigError(
            f"{named('import_dump')} and {named('import_snapshot')} cannot be used together: "
            f"a launch imports either a dump or a snapshot."
        )
    given_s3 = [name for name in _S3_CREDENTIALS if getattr(config, name) is not None]
    if given_s3 and len(given_s3) < len(_S3_CREDENTIALS):
        missing_s3 = ", ".join(f"`{name}`" for name in _S3_CREDENTIALS if name not in given_s3)
        raise ConfigError(
            f"Snapshots to object storage need all of the bucket URL, region, name, access key and "
            f"secret key; {named(given_s3[0])} is set but these are missing: {missing_s3}."
        )
    server_context(config)  # refuses unusable certificate files now rather than in the gateway
    warnings = _check_master_key(config, origins)
    if config.ssl_ocsp_path is not None:
        warnings.append(
            f"{named('ssl_ocsp_path')} is ignored: this server does not staple OCSP responses; clients"
            " check the certificate's status themselves."
        )
    if config.max_indexing_memory >= total_memory:
        warnings.append(
            f"{named('max_indexing_memory')} is {format_size(config.max_indexing_memory)}, not less than "
            f"the {format_size(total_memory)} of memory of this machine: indexing may run out of memory."
        )
    return warnings


def _check_master_key(config: Config, origins: Mapping[str, str]) -> list[str]:
    suggestion = secrets.token_urlsafe(32)
    key = config.master_key
    if config.env == "production":
        if key is None:
            problem = "but none is set"
        elif len(key.encode()) < _MIN_MASTER_KEY_BYTES:
            problem = f"but the one set by {origins['master_key']} is only {len(key.encode())} bytes long"
        else:
            return []
        raise ConfigError(
            f"In production (`env` set by {origins['env']}), a master key of at least "
            f"{_MIN_MASTER_KEY_BYTES} bytes is required to protect the data, {problem}. Set one with "
            f"`--master-key` or `SEARCH_MASTER_KEY`, for example this freshly generated key: {suggestion}"
        )
    if key is None:
        return [
            "No master key is set: every route is public, so anyone who can reach the server can read "
            "and change all data. Set one with `--master-key` or `SEARCH_MASTER_KEY` (at least "
            f"{_MIN_MASTER_KEY_BYTES} bytes; required with `--env production`), for example: {suggestion}"
        ]
    return []
