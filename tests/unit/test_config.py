"""The configuration layer: options, layers and their precedence, launch rules, serialisation."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

import pytest
import trustme
from cryptography import x509

from common.config import SUBCOMMANDS, Config, ConfigError, LoadedConfig, load_config
from common.config.options import OPTIONS
from common.config.sizes import format_size, parse_size
from tests.support.ocsp import ocsp_response, unauthorized_response

GIB = 1024**3
MEMORY = 12 * GIB
CPUS = 8
GOOD_KEY = "a-master-key-of-24-bytes"


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    return tmp_path


def load(
    cwd: Path,
    *argv: str,
    env: Mapping[str, str] | None = None,
    total_memory: int = MEMORY,
    cpu_count: int = CPUS,
    subcommand: str = "serve",
) -> LoadedConfig:
    return load_config(
        [subcommand, *argv], env or {}, cwd=cwd, total_memory=total_memory, cpu_count=cpu_count
    )


def write_config(cwd: Path, text: str, name: str = "config.toml") -> Path:
    path = cwd / name
    path.write_text(text)
    return path


def load_error(cwd: Path, *argv: str, env: Mapping[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as raised:
        load(cwd, *argv, env=env)
    return str(raised.value)


# Defaults


def test_every_option_has_its_default(cwd: Path) -> None:
    config = load(cwd).config
    assert dataclasses.asdict(config) == {
        "db_path": cwd / "data.ms",
        "env": "development",
        "http_addr": "localhost:7700",
        "master_key": None,
        "no_analytics": False,
        "http_payload_size_limit": 100_000_000,
        "log_level": "INFO",
        "max_indexing_memory": 8 * GIB,
        "max_indexing_threads": 4,
        "read_cache_size": 3 * GIB // 2,
        "result_cache_size": 64 * 1024**2,
        "task_webhook_url": None,
        "task_webhook_authorization_header": None,
        "task_webhook_signing_secret": None,
        "webhook_timeout": 30,
        "webhook_retry_duration": 3600,
        "dump_dir": cwd / "dumps",
        "import_dump": None,
        "ignore_missing_dump": False,
        "ignore_dump_if_db_exists": False,
        "schedule_snapshot": None,
        "snapshot_dir": cwd / "snapshots",
        "import_snapshot": None,
        "ignore_missing_snapshot": False,
        "ignore_snapshot_if_db_exists": False,
        "config_file_path": cwd / "config.toml",
        "experimental_enable_metrics": False,
        "experimental_enable_logs_route": False,
        "experimental_replication_parameters": False,
        "experimental_reduce_indexing_memory_usage": False,
        "experimental_contains_filter": False,
        "experimental_dumpless_upgrade": False,
        "experimental_no_snapshot_compaction": False,
        "experimental_no_edition_2024_for_settings": False,
        "experimental_no_edition_2024_for_dumps": False,
        "experimental_logs_mode": "human",
        "experimental_max_number_of_batched_tasks": None,
        "experimental_limit_batched_tasks_total_size": 32 * 1024**2,
        "experimental_search_queue_size": 1000,
        "experimental_drop_search_after": 60,
        "experimental_nb_searches_per_core": 4,
        "experimental_embedding_cache_entries": 0,
        "experimental_allowed_ip_networks": None,
        "experimental_personalization_api_key": None,
        "experimental_personalization_url": "https://api.cohere.com",
        "experimental_personalization_model": "rerank-v3.5",
        "ssl_cert_path": None,
        "ssl_key_path": None,
        "ssl_auth_path": None,
        "ssl_ocsp_path": None,
        "ssl_require_auth": False,
        "ssl_resumption": False,
        "ssl_tickets": False,
        "objstore_bucket_url": None,
        "objstore_bucket_region": None,
        "objstore_bucket_name": None,
        "objstore_snapshot_prefix": None,
        "objstore_access_key": None,
        "objstore_secret_key": None,
        "experimental_objstore_role_arn": None,
        "experimental_objstore_web_identity_token_file": None,
        "experimental_objstore_max_in_flight_parts": 10,
        "experimental_objstore_compression_level": 0,
        "experimental_objstore_signature_duration_seconds": 28800,
        "experimental_objstore_multipart_part_size": 375 * 1024**2,
        "shards": CPUS,
    }


def test_config_has_exactly_the_options_of_the_table_in_order() -> None:
    assert [field.name for field in dataclasses.fields(Config)] == [option.name for option in OPTIONS]


def test_machine_dependent_defaults_follow_the_machine(cwd: Path) -> None:
    config = load(cwd, total_memory=96 * GIB, cpu_count=1).config
    assert config.max_indexing_memory == 64 * GIB
    assert config.max_indexing_threads == 1
    assert config.shards == 1
    assert config.experimental_limit_batched_tasks_total_size == 32 * 1024**2  # half would be 32 GiB
    assert config.read_cache_size == 12 * GIB


def test_result_cache_size_takes_units_and_zero(cwd: Path) -> None:
    assert load(cwd, "--result-cache-size", "0").config.result_cache_size == 0
    assert load(cwd, env={"SEARCH_RESULT_CACHE_SIZE": "1MiB"}).config.result_cache_size == 1024**2


def test_read_cache_size_takes_units_and_zero(cwd: Path) -> None:
    assert load(cwd, "--read-cache-size", "300MiB").config.read_cache_size == 300 * 1024**2
    assert load(cwd, env={"SEARCH_READ_CACHE_SIZE": "0"}).config.read_cache_size == 0


def test_batch_size_default_follows_a_configured_indexing_memory(cwd: Path) -> None:
    config = load(cwd, "--max-indexing-memory", "50MiB").config
    assert config.experimental_limit_batched_tasks_total_size == 25 * 1024**2


def test_returns_the_subcommand_and_no_shard_id_outside_shard(cwd: Path) -> None:
    for subcommand in ("serve", "gateway", "scheduler", "config"):
        result = load(cwd, subcommand=subcommand)
        assert (result.subcommand, result.shard_id) == (subcommand, None)
    assert SUBCOMMANDS == ("serve", "gateway", "shard", "scheduler", "config")


# Layers and precedence: CLI > environment > config file > default


def test_config_file_overrides_default(cwd: Path) -> None:
    write_config(cwd, 'shards = 3\nlog_level = "debug"\nexperimental_enable_metrics = true\n')
    config = load(cwd).config
    assert (config.shards, config.log_level, config.experimental_enable_metrics) == (3, "DEBUG", True)


def test_environment_overrides_config_file(cwd: Path) -> None:
    write_config(cwd, 'shards = 3\nlog_level = "debug"\nexperimental_enable_metrics = true\n')
    env = {"SEARCH_SHARDS": "5", "SEARCH_LOG_LEVEL": "warn", "SEARCH_EXPERIMENTAL_ENABLE_METRICS": "false"}
    config = load(cwd, env=env).config
    assert (config.shards, config.log_level, config.experimental_enable_metrics) == (5, "WARN", False)


def test_cli_overrides_environment(cwd: Path) -> None:
    write_config(cwd, 'shards = 3\nlog_level = "debug"\n')
    env = {"SEARCH_SHARDS": "5", "SEARCH_LOG_LEVEL": "warn"}
    config = load(cwd, "--shards", "7", "--log-level=error", env=env).config
    assert (config.shards, config.log_level) == (7, "ERROR")


def test_config_file_path_comes_from_cli_or_environment(cwd: Path) -> None:
    from_env = write_config(cwd, "shards = 2\n", name="env.toml")
    from_cli = write_config(cwd, "shards = 4\n", name="cli.toml")
    env = {"SEARCH_CONFIG_FILE_PATH": "env.toml"}
    assert load(cwd, env=env).config.config_file_path == from_env
    assert load(cwd, env=env).config.shards == 2
    assert load(cwd, "--config-file-path", str(from_cli), env=env).config.shards == 4


def test_lower_layers_are_checked_even_when_overridden(cwd: Path) -> None:
    write_config(cwd, "shards = 0\n")
    message = load_error(cwd, "--shards", "2")
    assert "`shards`" in message and "config.toml" in message


def test_unknown_search_environment_variables_are_ignored(cwd: Path) -> None:
    assert load(cwd, env={"SEARCH_NOT_AN_OPTION": "x", "MEILI_SHARDS": "x"}).config.shards == CPUS


def test_empty_environment_variables_count_as_unset(cwd: Path) -> None:
    assert load(cwd, env={"SEARCH_SHARDS": "", "SEARCH_MASTER_KEY": ""}).config.master_key is None


def test_relative_paths_resolve_against_cwd_and_absolute_paths_stay(
    cwd: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("dumps")
    config = load(cwd, "--db-path", "db/../other", "--dump-dir", str(elsewhere)).config
    assert config.db_path == cwd / "db/../other"
    assert config.dump_dir == elsewhere


# Sizes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (1234, 1234),
        ("10B", 10),
        ("1 KB", 1000),
        ("5gb", 5 * 1000**3),
        ("100Mb", 100_000_000),
        ("100 MB", 100_000_000),
        ("100mb", 100_000_000),
        ("2GiB", 2 * GIB),
        ("1.5 GiB", 3 * GIB // 2),
        ("512kib", 512 * 1024),
        ("3 TB", 3 * 1000**4),
        ("1 TiB", 1024**4),
        ("42", 42),
    ],
)
def test_parse_size(text: str | int, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "MB", "12 potatoes", "-1MB", "1,5GB", "1 M", -1, True])
def test_parse_size_rejects_malformed_sizes(text: str | int) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (100_000_000, "100 MB"),
        (10 * 1024**2, "10 MiB"),
        (3, "3 B"),
        (0, "0 B"),
        (1024, "1 KiB"),
        (1_024_000, "1000 KiB"),
        (1500, "1500 B"),
        (2 * GIB, "2 GiB"),
    ],
)
def test_format_size(size: int, expected: str) -> None:
    assert format_size(size) == expected


def test_sizes_are_read_from_every_layer(cwd: Path) -> None:
    write_config(
        cwd, 'http_payload_size_limit = "1 KiB"\nexperimental_objstore_multipart_part_size = 6291456\n'
    )
    config = load(cwd, env={"SEARCH_MAX_INDEXING_MEMORY": "1.5 GiB"}).config
    assert config.http_payload_size_limit == 1024
    assert config.experimental_objstore_multipart_part_size == 6 * 1024**2
    assert config.max_indexing_memory == 3 * GIB // 2


# Bad values name the option, the layer and the value


def test_non_integer_in_environment_is_reported_with_the_variable(cwd: Path) -> None:
    message = load_error(cwd, env={"SEARCH_MAX_INDEXING_THREADS": "many"})
    assert "`many`" in message
    assert "`max_indexing_threads`" in message
    assert "SEARCH_MAX_INDEXING_THREADS" in message


def test_bad_size_on_cli_is_reported_with_the_flag(cwd: Path) -> None:
    message = load_error(cwd, "--http-payload-size-limit", "lots")
    assert "`lots`" in message and "--http-payload-size-limit" in message


def test_bad_choice_in_config_file_is_reported_with_file_and_key(cwd: Path) -> None:
    path = write_config(cwd, 'env = "staging"\n')
    message = load_error(cwd)
    assert "`staging`" in message and "key `env`" in message and str(path) in message
    assert "`development`, `production`" in message


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ('shards = "4"\n', "shards"),
        ("master_key = 1234\n", "master_key"),
        ("no_analytics = 1\n", "no_analytics"),
        ("max_indexing_threads = true\n", "max_indexing_threads"),
        ('schedule_snapshot = "3600"\n', "schedule_snapshot"),
    ],
)
def test_config_file_values_must_have_the_natural_toml_type(cwd: Path, toml: str, key: str) -> None:
    write_config(cwd, toml)
    assert f"key `{key}`" in load_error(cwd)


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (("--shards", "0"), "at least 1"),
        (("--experimental-search-queue-size", "0"), "at least 1"),
        (("--experimental-embedding-cache-entries", "-1"), "at least 0"),
        (("--experimental-s3-compression-level", "23"), "between 0 and 22"),
        (("--experimental-objstore-multipart-part-size", "4 MiB"), "between 5 MiB and 5 GiB"),
        (("--max-indexing-threads", "1.5"), "expected an integer"),
    ],
)
def test_numbers_out_of_range_are_refused(cwd: Path, argv: tuple[str, str], reason: str) -> None:
    message = load_error(cwd, *argv)
    assert reason in message and argv[0] in message


def test_choices_are_case_insensitive(cwd: Path) -> None:
    config = load(
        cwd, "--log-level", "trace", "--experimental-logs-mode", "JSON", "--env", "Development"
    ).config
    assert (config.log_level, config.experimental_logs_mode, config.env) == ("TRACE", "json", "development")


@pytest.mark.parametrize(
    "addr", ["0.0.0.0:7700", "localhost:0", "[::1]:7700", "[::]:65535", "search.local:80"]
)
def test_valid_http_addresses(cwd: Path, addr: str) -> None:
    assert load(cwd, "--http-addr", addr).config.http_addr == addr


@pytest.mark.parametrize(
    "addr", ["localhost", ":7700", "localhost:65536", "localhost:port", "::1:7700", "[::1]"]
)
def test_invalid_http_addresses(cwd: Path, addr: str) -> None:
    assert f"`{addr}`" in load_error(cwd, "--http-addr", addr)


def test_task_webhook_url_must_be_http(cwd: Path) -> None:
    url = "https://hooks.example.com:8443/sift?x=1"
    assert load(cwd, "--task-webhook-url", url).config.task_webhook_url == url
    for bad in ("ftp://example.com", "example.com/hook", "http://", "http://host:99999/"):
        assert "task_webhook_url" in load_error(cwd, "--task-webhook-url", bad)


@pytest.mark.parametrize("value", ["any", "10.0.0.0/8", "127.0.0.1", "10.0.0.0/8,::1/128,192.168.1.0/24"])
def test_allowed_ip_networks(cwd: Path, value: str) -> None:
    flag = "--experimental-allowed-ip-networks"
    assert load(cwd, flag, value).config.experimental_allowed_ip_networks == value
    environ = {"SEARCH_EXPERIMENTAL_ALLOWED_IP_NETWORKS": value}
    assert load(cwd, env=environ).config.experimental_allowed_ip_networks == value


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("foo", "`foo` is not an IP address or network"),
        ("10.0.0.0/8, 127.0.0.0/8", "` 127.0.0.0/8` is not an IP address or network"),
        ("10.0.0.1/8", "`10.0.0.1/8`: the host part of the address is not zero"),
        ("ANY", "`ANY` is not an IP address"),
        ("10.0.0.0/8,", "`` is not an IP address"),
    ],
)
def test_invalid_allowed_ip_networks(cwd: Path, value: str, reason: str) -> None:
    message = load_error(cwd, "--experimental-allowed-ip-networks", value)
    assert "experimental_allowed_ip_networks" in message and reason in message


# Flags


@pytest.mark.parametrize("argv", [("--no-analytics", "true"), ("--no-analytics=true",), ("--ssl-tickets=",)])
def test_cli_flags_take_no_value(cwd: Path, argv: tuple[str, ...]) -> None:
    assert "takes no value" in load_error(cwd, *argv)


def test_cli_flag_alone_enables_it(cwd: Path) -> None:
    config = load(cwd, "--no-analytics", "--ssl-resumption").config
    assert (config.no_analytics, config.ssl_resumption, config.ssl_tickets) == (True, True, False)


@pytest.mark.parametrize(
    ("raw", "expected"), [("true", True), ("TRUE", True), ("1", True), ("false", False), ("0", False)]
)
def test_environment_flags(cwd: Path, raw: str, expected: bool) -> None:
    assert load(cwd, env={"SEARCH_NO_ANALYTICS": raw}).config.no_analytics is expected


def test_environment_flag_with_another_value_is_refused(cwd: Path) -> None:
    message = load_error(cwd, env={"SEARCH_EXPERIMENTAL_CONTAINS_FILTER": "yes"})
    assert "SEARCH_EXPERIMENTAL_CONTAINS_FILTER" in message and "`yes`" in message


# Unknown options and the config file itself


def test_unknown_cli_option_is_refused(cwd: Path) -> None:
    message = load_error(cwd, "--db-pth", "x")
    assert "Unknown command-line option `--db-pth`" in message and "`--db-path`" in message


@pytest.mark.parametrize("argv", [(), ("bogus",), ("--shards", "2")])
def test_missing_or_unknown_subcommand_is_refused(argv: tuple[str, ...]) -> None:
    with pytest.raises(ConfigError):
        load_config(list(argv), {})


def test_stray_positional_argument_is_refused(cwd: Path) -> None:
    assert "Unexpected argument `now`" in load_error(cwd, "now")


def test_unknown_config_file_key_is_refused_with_file_and_key(cwd: Path) -> None:
    path = write_config(cwd, "shards = 2\nmax_indexing_thread = 2\n")
    message = load_error(cwd)
    assert "`max_indexing_thread`" in message and str(path) in message


def test_config_file_path_inside_config_file_is_refused(cwd: Path) -> None:
    path = write_config(cwd, 'config_file_path = "other.toml"\n')
    message = load_error(cwd)
    assert "config_file_path" in message and str(path) in message


def test_explicit_missing_config_file_is_refused(cwd: Path) -> None:
    message = load_error(cwd, env={"SEARCH_CONFIG_FILE_PATH": "missing.toml"})
    assert str(cwd / "missing.toml") in message and "SEARCH_CONFIG_FILE_PATH" in message


def test_malformed_config_file_is_refused(cwd: Path) -> None:
    path = write_config(cwd, "shards = = 2\n")
    assert str(path) in load_error(cwd)


def test_help_lists_every_option_with_its_environment_variable(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        load_config(["serve", "--help"], {})
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for option in OPTIONS:
        assert option.flag in out
        assert f"[env: {option.env_var}]" in out


# Launch rules


@pytest.mark.parametrize(
    ("flag", "needed"),
    [
        ("ignore_missing_dump", "import_dump"),
        ("ignore_dump_if_db_exists", "import_dump"),
        ("ignore_missing_snapshot", "import_snapshot"),
        ("ignore_snapshot_if_db_exists", "import_snapshot"),
        ("ssl_require_auth", "ssl_auth_path"),
    ],
)
def test_flags_that_need_another_option(cwd: Path, flag: str, needed: str) -> None:
    message = load_error(cwd, env={f"SEARCH_{flag.upper()}": "true"})
    assert f"`{flag}`" in message and f"`{needed}`" in message and f"SEARCH_{flag.upper()}" in message
    needed_flag = "--" + needed.replace("_", "-")
    assert getattr(load(cwd, "--" + flag.replace("_", "-"), needed_flag, "x").config, flag) is True


def test_ignore_missing_dump_with_import_dump_launches(cwd: Path) -> None:
    config = load(cwd, "--import-dump", "dumps/a.dump", "--ignore-missing-dump").config
    assert config.import_dump == cwd / "dumps/a.dump"
    assert config.ignore_missing_dump is True


def test_dump_and_snapshot_imports_are_exclusive(cwd: Path) -> None:
    message = load_error(cwd, "--import-dump", "a.dump", "--import-snapshot", "b.snapshot")
    assert "`import_dump`" in message and "`import_snapshot`" in message


@pytest.mark.parametrize(
    ("given", "missing"), [("--ssl-cert-path", "ssl_key_path"), ("--ssl-key-path", "ssl_cert_path")]
)
def test_tls_certificate_and_key_go_together(cwd: Path, given: str, missing: str) -> None:
    assert f"`{missing}`" in load_error(cwd, given, "tls.pem")


def test_tls_with_certificate_and_key(cwd: Path) -> None:
    """Relative paths are the working directory's; the files must form a usable certificate."""
    server = trustme.CA().issue_cert("localhost")
    server.cert_chain_pems[0].write_to_path(str(cwd / "cert.pem"))
    server.private_key_pem.write_to_path(str(cwd / "key.pem"))
    config = load(cwd, "--ssl-cert-path", "cert.pem", "--ssl-key-path", str(cwd / "key.pem")).config
    assert (config.ssl_cert_path, config.ssl_key_path) == (cwd / "cert.pem", cwd / "key.pem")
    message = load_error(cwd, "--ssl-cert-path", "key.pem", "--ssl-key-path", "cert.pem")
    assert message.startswith(f"Cannot use the TLS certificate `{cwd / 'key.pem'}` with the key")


def test_object_storage_options_go_together(cwd: Path) -> None:
    env = {
        "SEARCH_EXPERIMENTAL_S3_BUCKET_URL": "https://s3.example.com",
        "SEARCH_OBJSTORE_BUCKET_NAME": "b",
        "SEARCH_OBJSTORE_ACCESS_KEY": "ak",
    }
    message = load_error(cwd, env=env)
    for missing in ("objstore_bucket_region", "objstore_secret_key"):
        assert f"`{missing}`" in message
    assert "`objstore_bucket_name`" not in message.split("missing")[1]
    assert "SEARCH_EXPERIMENTAL_S3_BUCKET_URL" in message


def test_a_bucket_without_credentials_is_refused(cwd: Path) -> None:
    message = load_error(
        cwd, "--objstore-bucket-url", "http://127.0.0.1:9000", "--objstore-bucket-region", "eu",
        "--objstore-bucket-name", "b",
    )
    assert "missing: credentials" in message


def test_static_keys_and_web_identity_are_exclusive(cwd: Path) -> None:
    message = load_error(
        cwd, "--objstore-access-key", "ak", "--experimental-objstore-role-arn", "arn:aws:iam::1:role/r"
    )
    assert message.startswith("`objstore_access_key` (set by command-line option `--objstore-access-key`)")
    assert "cannot be used together" in message


def test_web_identity_needs_its_token_file(cwd: Path) -> None:
    message = load_error(
        cwd, "--objstore-bucket-url", "http://127.0.0.1:9000", "--objstore-bucket-region", "eu",
        "--objstore-bucket-name", "b", "--experimental-s3-role-arn", "arn:aws:iam::1:role/r",
    )
    assert "missing: `experimental_objstore_web_identity_token_file`" in message


def test_complete_object_storage_options_under_every_spelling(cwd: Path) -> None:
    write_config(
        cwd,
        'experimental_s3_bucket_url = "https://s3.example.com"\ns3_bucket_region = "eu"\n'
        'objstore_bucket_name = "b"\nexperimental_s3_role_arn = "arn:aws:iam::1:role/r"\n'
        'experimental_objstore_multipart_part_size = "10 MiB"\n',
    )
    config = load(
        cwd,
        *("--experimental-s3-web-identity-token-file", "token", "--experimental-s3-max-in-flight-parts", "3"),
        env={"SEARCH_EXPERIMENTAL_S3_COMPRESSION_LEVEL": "7"},
    ).config
    assert config.objstore_bucket_url == "https://s3.example.com"
    assert config.objstore_bucket_region == "eu"
    assert config.experimental_objstore_role_arn == "arn:aws:iam::1:role/r"
    assert config.experimental_objstore_web_identity_token_file == cwd / "token"
    assert config.experimental_objstore_max_in_flight_parts == 3
    assert config.experimental_objstore_compression_level == 7
    assert config.experimental_objstore_multipart_part_size == 10 * 1024**2


def test_an_option_and_its_alias_in_one_layer_are_refused(cwd: Path) -> None:
    write_config(cwd, 'objstore_bucket_name = "a"\nexperimental_s3_bucket_name = "b"\n')
    message = load_error(cwd)
    assert "`objstore_bucket_name` is set twice" in message and "key `experimental_s3_bucket_name`" in message
    (cwd / "config.toml").unlink()
    message = load_error(cwd, env={"SEARCH_S3_BUCKET_NAME": "a", "SEARCH_OBJSTORE_BUCKET_NAME": "b"})
    assert "is set twice" in message


def test_upgrade_db_is_the_dumpless_upgrade(cwd: Path) -> None:
    assert load(cwd, "--upgrade-db").config.experimental_dumpless_upgrade is True


@pytest.mark.parametrize("key", [None, "short-key", "fifteen-bytes!!"])
def test_production_needs_a_long_master_key(cwd: Path, key: str | None) -> None:
    argv = ("--env", "production") + (("--master-key", key) if key else ())
    first, second = load_error(cwd, *argv), load_error(cwd, *argv)
    assert "16 bytes" in first and "production" in first
    suggested = first.rsplit(" ", 1)[1]
    assert len(suggested) >= 32 and suggested not in second


def test_production_with_a_16_byte_master_key_launches_without_warnings(cwd: Path) -> None:
    result = load(cwd, "--master-key", "é" * 8, env={"SEARCH_ENV": "production"})  # 8 characters, 16 bytes
    assert (result.config.env, result.config.master_key, result.warnings) == ("production", "é" * 8, [])


def test_development_without_master_key_warns(cwd: Path) -> None:
    warnings = load(cwd).warnings
    assert len(warnings) == 1 and "No master key" in warnings[0] and "public" in warnings[0]
    assert load(cwd, "--master-key", GOOD_KEY).warnings == []


def test_indexing_memory_at_least_total_memory_warns(cwd: Path) -> None:
    result = load(cwd, "--master-key", GOOD_KEY, "--max-indexing-memory", "12GiB")
    assert result.config.max_indexing_memory == MEMORY
    assert len(result.warnings) == 1 and "max_indexing_memory" in result.warnings[0]


def test_an_ocsp_response_without_a_certificate_is_ignored_with_a_warning(cwd: Path) -> None:
    result = load(cwd, "--master-key", GOOD_KEY, "--ssl-ocsp-path", "ocsp.der")
    assert len(result.warnings) == 1 and "`ssl_ocsp_path`" in result.warnings[0]
    assert "without `ssl_cert_path`" in result.warnings[0]


def test_an_ocsp_response_must_give_the_status_of_the_certificate(cwd: Path) -> None:
    """Checked at launch: a client would reject a response about another certificate, or none."""
    authority = trustme.CA()
    server, other = authority.issue_cert("localhost"), authority.issue_cert("other.example")
    server.cert_chain_pems[0].write_to_path(str(cwd / "cert.pem"))
    server.private_key_pem.write_to_path(str(cwd / "key.pem"))
    tls = ("--master-key", GOOD_KEY, "--ssl-cert-path", "cert.pem", "--ssl-key-path", "key.pem")
    (cwd / "good.der").write_bytes(ocsp_response(authority, server.cert_chain_pems[0].bytes()))
    assert load(cwd, *tls, "--ssl-ocsp-path", "good.der").warnings == []
    (cwd / "other.der").write_bytes(ocsp_response(authority, other.cert_chain_pems[0].bytes()))
    (cwd / "refused.der").write_bytes(unauthorized_response())
    (cwd / "garbage.der").write_bytes(b"not DER")
    for name, expected in (
        (
            "other.der",
            f"is about the certificate of serial number {_serial(other)}, not `{cwd / 'cert.pem'}`",
        ),
        ("refused.der", "holds no certificate status (its status is `unauthorized`)"),
        ("garbage.der", "is not a DER-encoded OCSP response"),
        ("missing.der", "Cannot read the OCSP response"),
    ):
        assert expected in load_error(cwd, *tls, "--ssl-ocsp-path", name), name


def _serial(certificate: trustme.LeafCert) -> str:
    return f"{x509.load_pem_x509_certificate(certificate.cert_chain_pems[0].bytes()).serial_number:x}"


def test_indexing_threads_above_core_count_are_capped_with_a_warning(cwd: Path) -> None:
    result = load(cwd, "--master-key", GOOD_KEY, env={"SEARCH_MAX_INDEXING_THREADS": "64"})
    assert result.config.max_indexing_threads == CPUS
    assert len(result.warnings) == 1 and "64" in result.warnings[0] and "8 cores" in result.warnings[0]


# schedule_snapshot


@pytest.mark.parametrize(
    ("argv", "env", "toml", "expected"),
    [
        (("--schedule-snapshot",), {}, "", 86400),
        (("--schedule-snapshot", "3600"), {}, "", 3600),
        (("--schedule-snapshot=false",), {}, "schedule_snapshot = 60\n", None),
        ((), {"SEARCH_SCHEDULE_SNAPSHOT": "true"}, "", 86400),
        ((), {"SEARCH_SCHEDULE_SNAPSHOT": "false"}, "schedule_snapshot = true\n", None),
        ((), {"SEARCH_SCHEDULE_SNAPSHOT": "1"}, "", 1),
        ((), {}, "schedule_snapshot = true\n", 86400),
        ((), {}, "schedule_snapshot = false\n", None),
        ((), {}, "schedule_snapshot = 7200\n", 7200),
    ],
)
def test_schedule_snapshot_forms(
    cwd: Path, argv: tuple[str, ...], env: dict[str, str], toml: str, expected: int | None
) -> None:
    write_config(cwd, toml)
    assert load(cwd, *argv, env=env).config.schedule_snapshot == expected


@pytest.mark.parametrize(
    ("argv", "env", "toml"),
    [
        (("--schedule-snapshot", "0"), {}, ""),
        (("--schedule-snapshot=-5",), {}, ""),
        ((), {"SEARCH_SCHEDULE_SNAPSHOT": "0"}, ""),
        ((), {"SEARCH_SCHEDULE_SNAPSHOT": "daily"}, ""),
        ((), {}, "schedule_snapshot = 0\n"),
        ((), {}, "schedule_snapshot = -1\n"),
    ],
)
def test_schedule_snapshot_must_be_positive(
    cwd: Path, argv: tuple[str, ...], env: dict[str, str], toml: str
) -> None:
    write_config(cwd, toml)
    with pytest.raises(ConfigError, match="schedule_snapshot"):
        load(cwd, *argv, env=env)


# shard --id


def test_shard_id(cwd: Path) -> None:
    result = load(cwd, "--id", "2", "--shards", "3", subcommand="shard")
    assert (result.subcommand, result.shard_id, result.config.shards) == ("shard", 2, 3)


@pytest.mark.parametrize("argv", [(), ("--id", "3"), ("--id", "-1"), ("--id", "one")])
def test_shard_id_is_required_and_within_the_shard_count(cwd: Path, argv: tuple[str, ...]) -> None:
    with pytest.raises(ConfigError, match="--id"):
        load(cwd, "--shards", "3", *argv, subcommand="shard")


def test_shard_id_is_only_for_shard(cwd: Path) -> None:
    assert "only accepted by `sift shard`" in load_error(cwd, "--id", "0")


# Serialisation


def _everything_set(cwd: Path) -> Config:
    return load(
        cwd,
        "--master-key", GOOD_KEY,
        "--task-webhook-url", "https://hooks.example.com/sift",
        "--task-webhook-authorization-header", "Bearer hook-secret",
        "--task-webhook-signing-secret", "signing-secret",
        "--import-snapshot", "snap/x.snapshot",
        "--schedule-snapshot",
        "--experimental-s3-bucket-url", "https://s3.example.com",
        "--experimental-s3-bucket-region", "eu-west-3",
        "--experimental-s3-bucket-name", "sift",
        "--experimental-s3-access-key", "access",
        "--experimental-s3-secret-key", "s3-secret",
        "--experimental-max-number-of-batched-tasks", "50",
    ).config  # fmt: skip


def test_json_round_trip_is_lossless(cwd: Path) -> None:
    config = _everything_set(cwd)
    restored = Config.from_json(config.to_json())
    assert restored == config
    assert isinstance(restored.import_snapshot, Path) and restored.import_dump is None
    assert Config.from_json(load(cwd).config.to_json()) == load(cwd).config


def test_from_json_refuses_another_shape(cwd: Path) -> None:
    data = json.loads(load(cwd).config.to_json())
    data["unexpected"] = 1
    with pytest.raises(ConfigError, match="unexpected"):
        Config.from_json(json.dumps(data))


def test_public_dict_masks_secrets_and_is_json_ready(cwd: Path) -> None:
    public = _everything_set(cwd).public_dict()
    text = json.dumps(public)
    for secret in (GOOD_KEY, "hook-secret", "signing-secret", "s3-secret"):
        assert secret not in text
    assert public["master_key"] == public["objstore_secret_key"] == "[redacted]"
    assert public["task_webhook_authorization_header"] == "[redacted]"
    assert public["objstore_access_key"] == "access"
    assert public["import_snapshot"] == str(cwd / "snap/x.snapshot")
    assert list(public) == [option.name for option in OPTIONS]
    assert load(cwd).config.public_dict()["master_key"] is None


# shard count of an existing data directory


def make_shards(cwd: Path, count: int) -> None:
    for shard in range(count):
        (cwd / "data.ms" / "shards" / str(shard)).mkdir(parents=True)


def test_a_new_data_directory_gets_one_shard_per_core(cwd: Path) -> None:
    assert load(cwd).config.shards == CPUS


def test_an_existing_data_directory_keeps_its_shard_count(cwd: Path) -> None:
    make_shards(cwd, 3)
    assert load(cwd).config.shards == 3
    assert load(cwd, "--shards", "3").config.shards == 3


def test_another_shard_count_for_existing_data_is_refused(cwd: Path) -> None:
    make_shards(cwd, 3)
    message = load_error(cwd, "--shards", "2")
    assert "holds 3 shards, but `shards` is 2 (set by command-line option `--shards`)" in message
    assert "start with 3 shards" in message
    assert "holds 3 shards" in load_error(cwd, env={"SEARCH_SHARDS": "4"})
