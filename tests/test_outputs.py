"""Atomic outputs: a write that fails partway leaves the previous file as it was and no
temporary file behind (tileprof/core/outputs.py)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.samples import sample, write_dump
from tileprof.commands.cli import cli
from tileprof.core.errors import OutputError
from tileprof.core.outputs import atomic_writer, write_bytes, write_text

PREVIOUS = "previous contents\n"


@pytest.fixture()
def existing(tmp_path: Path) -> Path:
    path = tmp_path / "out.json"
    path.write_text(PREVIOUS)
    return path


def _only(path: Path) -> list[str]:
    """Every file in the folder: the target alone, no temporary file."""
    return sorted(p.name for p in path.parent.iterdir())


def test_failure_partway_through_the_body(existing: Path) -> None:
    with pytest.raises(RuntimeError, match="halfway"), atomic_writer(existing) as handle:
        handle.write("half of the new ")
        handle.flush()
        raise RuntimeError("halfway")
    assert existing.read_text() == PREVIOUS
    assert _only(existing) == ["out.json"]


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fsync fails as a full disk does (delayed allocation reports ENOSPC there)."""

    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("binary", [False, True])
def test_full_disk_keeps_the_previous_file(
    existing: Path, monkeypatch: pytest.MonkeyPatch, binary: bool
) -> None:
    _full_disk(monkeypatch)
    with pytest.raises(OutputError, match="No space left on device") as info:
        if binary:
            write_bytes(existing, b"new contents")
        else:
            write_text(existing, "new contents")
    assert str(existing) in str(info.value)
    assert existing.read_text() == PREVIOUS
    assert _only(existing) == ["out.json"]


def test_full_disk_through_the_command(existing: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _full_disk(monkeypatch)
    dump = write_dump(existing.parent / "d.json", [sample(0, 0, 10)])
    args = ["summary", str(dump), "--format", "json", "-o", str(existing), "--force"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"tileprof: error: {existing}: cannot write: No space left on device"
    ]
    assert existing.read_text() == PREVIOUS
    assert _only(existing) == ["d.json", "out.json"]


def test_success_replaces_and_keeps_the_mode(existing: Path) -> None:
    existing.chmod(0o640)
    write_text(existing, "new")
    assert existing.read_text() == "new"
    assert existing.stat().st_mode & 0o777 == 0o640
    assert _only(existing) == ["out.json"]


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_new_file_gets_the_umask_mode(tmp_path: Path, umask: int, mode: int) -> None:
    """0666 less the umask, as ``open`` gives (mkstemp alone would leave 0600)."""
    old = os.umask(umask)
    try:
        write_bytes(tmp_path / "new.bin", b"\x00\x01")
    finally:
        os.umask(old)
    assert (tmp_path / "new.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "new.bin").stat().st_mode & 0o7777 == mode


def test_folder_and_missing_folder_are_output_errors(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="is a folder, not a file"):
        write_text(tmp_path, "x")
    with pytest.raises(OutputError, match=r"folder .*nowhere does not exist"):
        write_text(tmp_path / "nowhere" / "out.txt", "x")


def test_unwritable_folder_is_an_output_error(
    existing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in a read-only folder: the temporary file cannot be created (root could, so the
    refusal is simulated)."""

    def mkstemp(**_: object) -> tuple[int, str]:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr("tileprof.core.outputs.tempfile.mkstemp", mkstemp)
    with pytest.raises(OutputError, match="cannot write: Permission denied"):
        write_text(existing, "x")
    assert existing.read_text() == PREVIOUS


def test_stdout_gets_a_final_newline(capsys: pytest.CaptureFixture[str]) -> None:
    write_text(None, "a")
    write_text("-", "b\n")
    write_text(None, "")
    assert capsys.readouterr().out == "a\nb\n"
