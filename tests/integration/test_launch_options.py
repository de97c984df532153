"""Launch rules and option precedence, through the real ``sift`` command."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.cluster import REPO_ROOT, RunningCluster, free_port


def _sift(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SEARCH_")}
    full_env.update({"PYTHONPATH": str(REPO_ROOT), **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "sift.cli", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--env", "production"], {}, "master key"),
        (["--env", "production", "--master-key", "short"], {}, "16 bytes"),
        ([], {"SEARCH_ENV": "production"}, "master key"),
        (["--ignore-missing-dump"], {}, "requires `import_dump`"),
        (["--ignore-snapshot-if-db-exists"], {}, "requires `import_snapshot`"),
        (["--no-analytics=true"], {}, "--no-analytics"),
        (["--doggo"], {}, "--doggo"),
        (["--http-payload-size-limit", "lots"], {}, "lots"),
        ([], {"SEARCH_NO_ANALYTICS": "maybe"}, "SEARCH_NO_ANALYTICS"),
        (["--ssl-cert-path", "cert.pem"], {}, "requires `ssl_key_path`"),
        (
            ["--ssl-cert-path", "missing.pem", "--ssl-key-path", "missing.key"],
            {},
            "missing.key`: No such file or directory.",
        ),
    ],
)
def test_invalid_launch_is_refused_with_a_clear_message(
    tmp_path: Path, args: list[str], env: dict[str, str], expected: str
) -> None:
    result = _sift("serve", "--db-path", str(tmp_path / "data.ms"), *args, cwd=tmp_path, env=env)
    assert result.returncode != 0
    assert expected in result.stderr
    assert not (tmp_path / "data.ms").exists(), "a refused launch must not create the database"


def test_production_refusal_suggests_a_fresh_key(tmp_path: Path) -> None:
    first = _sift("serve", "--env", "production", cwd=tmp_path).stderr
    second = _sift("serve", "--env", "production", cwd=tmp_path).stderr
    assert first != second, "each refusal prints a freshly generated key"


def test_config_file_path_inside_config_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('config_file_path = "other.toml"\n')
    result = _sift("serve", cwd=tmp_path)
    assert result.returncode != 0
    assert "config_file_path" in result.stderr


def test_development_without_master_key_warns_that_routes_are_public(tmp_path: Path) -> None:
    with RunningCluster(shards=1, cwd=tmp_path) as running:
        assert httpx.get(f"{running.url}/health").status_code == 200
        text = "\n".join(running.output)
    assert "No master key is set" in text
    assert "public" in text


def test_each_shard_gets_its_share_of_the_read_cache(tmp_path: Path) -> None:
    with RunningCluster("--read-cache-size", "300MiB", shards=2, cwd=tmp_path) as running:
        text = "\n".join(running.output)
    assert text.count(f"read_cache_bytes={150 * 1024**2}") == 2, text


def test_max_indexing_threads_is_capped_at_core_count(tmp_path: Path) -> None:
    result = _sift("config", "--max-indexing-threads", "100000", cwd=tmp_path)
    assert result.returncode == 0
    assert f'"max_indexing_threads": {len(os.sched_getaffinity(0))},' in result.stdout
    assert "100000" in result.stderr, "the cap is announced as a warning"


def _listens(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _start_and_check_port(tmp_path: Path, port: int, *args: str, env: dict[str, str] | None = None) -> None:
    """Start ``sift serve`` with whatever sets the address, then find it listening on ``port``."""
    running = RunningCluster(
        shards=1, cwd=tmp_path, data_dir=tmp_path / "data.ms", env={"SEARCH_HTTP_ADDR": "", **(env or {})}
    )
    at = running.args.index("--http-addr")
    del running.args[at : at + 2]
    running.args += args
    running.url = f"http://127.0.0.1:{port}"
    try:
        running.start()
        assert _listens(port)
    finally:
        running.stop()


def test_config_file_sets_an_option(tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / "config.toml").write_text(f'http_addr = "127.0.0.1:{port}"\n')
    _start_and_check_port(tmp_path, port)


def test_environment_overrides_config_file(tmp_path: Path) -> None:
    file_port, env_port = free_port(), free_port()
    (tmp_path / "config.toml").write_text(f'http_addr = "127.0.0.1:{file_port}"\n')
    _start_and_check_port(tmp_path, env_port, env={"SEARCH_HTTP_ADDR": f"127.0.0.1:{env_port}"})
    assert not _listens(file_port)


def test_command_line_overrides_environment(tmp_path: Path) -> None:
    env_port, cli_port = free_port(), free_port()
    _start_and_check_port(
        tmp_path,
        cli_port,
        "--http-addr",
        f"127.0.0.1:{cli_port}",
        env={"SEARCH_HTTP_ADDR": f"127.0.0.1:{env_port}"},
    )


def test_defaults_apply_when_no_layer_sets_an_option(tmp_path: Path) -> None:
    result = _sift("config", cwd=tmp_path)
    assert result.returncode == 0
    assert '"http_addr": "localhost:7700"' in result.stdout
    assert f'"db_path": "{tmp_path / "data.ms"}"' in result.stdout
    assert '"http_payload_size_limit": 100000000' in result.stdout


def test_existing_data_keeps_its_shard_count(tmp_path: Path) -> None:
    """Documents are placed by a hash over the shard count: restarting on another count would hide some."""
    data_dir = tmp_path / "data.ms"
    # Three shards: more than this 2-core machine's default, so the test tells the two apart.
    with RunningCluster(shards=3, data_dir=data_dir) as cluster:
        task = httpx.post(f"{cluster.url}/indexes/books/documents", json=[{"id": n} for n in range(10)])
        uid = task.json()["taskUid"]
        while httpx.get(f"{cluster.url}/tasks/{uid}").json()["status"] in ("enqueued", "processing"):
            time.sleep(0.05)
    refused = _sift("serve", "--db-path", str(data_dir), "--shards", "1", cwd=tmp_path)
    assert refused.returncode != 0
    assert "holds 3 shards, but `shards` is 1" in refused.stderr
    # Without --shards the data directory's count is the default, whatever the machine's cores.
    shown = _sift("config", "--db-path", str(data_dir), cwd=tmp_path)
    assert '"shards": 3' in shown.stdout
    with RunningCluster(shards=3, data_dir=data_dir) as restarted:
        assert httpx.get(f"{restarted.url}/indexes/books/stats").json()["numberOfDocuments"] == 10
