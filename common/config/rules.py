"""Launch rules: combinations of options that are refused, or accepted with a warning.

Each option is valid on its own by the time these run; what is checked here is that the options
make sense together, and messages say which layer set each option involved.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping

from common.config.model import Config, ConfigError
from common.config.sizes import format_size
from common.tls import server_context

_MIN_MASTER_KEY_BYTES = 16
_BUCKET = ("objstore_bucket_url", "objstore_bucket_region", "objstore_bucket_name")
_STATIC_KEYS = ("objstore_access_key", "objstore_secret_key")
_WEB_IDENTITY = ("experimental_objstore_role_arn", "experimental_objstore_web_identity_token_file")


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
    _check_object_storage(config, named)
    server_context(config)  # refuses unusable certificate files now rather than in the gateway
    warnings = _check_master_key(config, origins)
    if config.ssl_ocsp_path is not None and config.ssl_cert_path is None:
        warnings.append(
            f"{named('ssl_ocsp_path')} is ignored: without `ssl_cert_path` there is no TLS to staple it to."
        )
    if config.max_indexing_memory >= total_memory:
        warnings.append(
            f"{named('max_indexing_memory')} is {format_size(config.max_indexing_memory)}, not less than "
            f"the {format_size(total_memory)} of memory of this machine: indexing may run out of memory."
        )
    return warnings


def _check_object_storage(config: Config, named: Callable[[str], str]) -> None:
    """Snapshots go to object storage with the whole bucket and one kind of credentials, never both:
    static keys, or a role assumed with a web identity token."""
    static = [name for name in _STATIC_KEYS if getattr(config, name) is not None]
    web = [name for name in _WEB_IDENTITY if getattr(config, name) is not None]
    bucket = [name for name in _BUCKET if getattr(config, name) is not None]
    if static and web:
        raise ConfigError(
            f"{named(static[0])} and {named(web[0])} cannot be used together: object storage is reached "
            f"either with an access key and secret key, or with a role ARN and a web identity token file."
        )
    given = bucket + static + web
    if not given:
        return
    credentials = _STATIC_KEYS if static else _WEB_IDENTITY if web else ()
    needed = [*_BUCKET, *credentials]
    missing = [name for name in needed if getattr(config, name) is None]
    if missing or not credentials:
        listed = ", ".join(f"`{name}`" for name in missing) or "credentials"
        raise ConfigError(
            f"Snapshots to object storage need the bucket URL, region and name, and either the access and "
            f"secret keys or a role ARN and web identity token file; {named(given[0])} is set but these "
            f"are missing: {listed}."
        )


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
