"""The store on an object store: S3 as moto's server emulates it on 127.0.0.1 (loopback only).

Credentials and endpoint reach delta-rs and polars through the standard ``AWS_*`` variables,
as they would for a real bucket.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.report_samples import generated_profile
from tileprof.views.writers import dump_bytes

moto_server = pytest.importorskip("moto.server")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    import os

    import boto3

    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {
        **os.environ,
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    client = boto3.client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    client.create_bucket(Bucket="profiles")
    try:
        yield env
    finally:
        server.stop()


def tileprof(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tileprof", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_store_on_s3(s3_env: dict[str, str], tmp_path: Path) -> None:
    dumps = []
    for seed in (1, 2):
        path = tmp_path / f"s3run{seed}.parquet"
        path.write_bytes(
            dump_bytes(generated_profile(samples=3000, tiles=32, seed=seed), "parquet")
        )
        dumps.append(path)
    uri = "s3://profiles/team/store"
    added = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tileprof",
                "store",
                "add",
                str(d),
                "--store",
                uri,
                "--run",
                f"s{i}",
            ],
            env=s3_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, d in enumerate(dumps)
    ]
    outputs = [p.communicate(timeout=180) for p in added]
    assert [p.returncode for p in added] == [0, 0], outputs  # two writers at once both land
    listed = tileprof(s3_env, "store", "list", "--store", uri, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(r["run"] for r in json.loads(listed.stdout)) == ["s0", "s1"]
    expected = tileprof(s3_env, "summary", str(dumps[1]), "--format", "json", "--epoch", "1")
    stored = tileprof(
        s3_env, "summary", "--store", uri, "--run", "s1", "--format", "json", "--epoch", "1"
    )
    assert stored.returncode == 0, stored.stderr
    assert stored.stdout == expected.stdout
    history = tileprof(s3_env, "history", "--store", uri, "--format", "json")
    assert history.returncode == 0, history.stderr
    missing = tileprof(s3_env, "summary", "--store", "s3://profiles/none")
    assert missing.returncode == 2
    assert missing.stderr.startswith("tileprof: error: s3://profiles/none: not a tileprof store")
