"""Special output paths and faults while writing (issue 11; docs/reliability.md, "Faults")."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.hostile import assert_one_line_error, invoke, strict_json
from tests.samples import sample, write_dump
from tileprof.core import outputs
from tileprof.core.outputs import remove_stale, write_text


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "dump.json", [sample(0, 0, 10, "k"), sample(1, 5, 10, "k")])


def test_symlink_is_written_through(tmp_path: Path, dump: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    code, _, err, exc = invoke("summary", dump, "--format", "json", "-o", link, "--force")
    assert exc is None and code == 0, err
    assert link.is_symlink()
    assert strict_json(real.read_text())["sampleCount"] == 2


def test_symlink_needs_force(tmp_path: Path, dump: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert_one_line_error("summary", dump, "-o", link, contains="--force")
    assert real.read_text() == "old"


def test_character_device_is_written_into_without_force(dump: Path) -> None:
    code, _, err, exc = invoke("summary", dump, "-o", "/dev/null")
    assert exc is None and code == 0, err
    assert Path("/dev/null").is_char_device()


def test_dev_stdout_stays_a_link_through_a_real_process(tmp_path: Path, dump: Path) -> None:
    stdout_link = tmp_path / "stdout"
    stdout_link.symlink_to("/dev/stdout")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tileprof",
            "summary",
            str(dump),
            "--format",
            "json",
            "-o",
            str(stdout_link),
            "--force",
        ],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert stdout_link.is_symlink()
    assert strict_json(proc.stdout.decode())["sampleCount"] == 2


def test_fifo_is_written_into(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read)
    reader.start()
    write_text(fifo, "hello\n")
    reader.join(timeout=30)
    assert received == [b"hello\n"]
    assert fifo.is_fifo()


def test_temporary_files_are_named_and_stale_ones_removed(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(dead.stdout)
    stale_dead = tmp_path / f".out.json.tileprof-{dead_pid}-abc.tmp"
    stale_old = tmp_path / f".out.json.tileprof-{os.getpid()}-def.tmp"
    fresh_alive = tmp_path / f".out.json.tileprof-{os.getpid()}-ghi.tmp"
    foreign = tmp_path / ".out.json.abcdef.tmp"
    for path in (stale_dead, stale_old, fresh_alive, foreign):
        path.write_text("partial")
    day_ago = time.time() - 2 * 86400
    os.utime(stale_old, (day_ago, day_ago))
    write_text(tmp_path / "out.json", "{}\n")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([fresh_alive.name, foreign.name, "out.json"])
    assert remove_stale(tmp_path) == []


def test_kill_during_write_leaves_a_recognisable_temp_file(tmp_path: Path) -> None:
    script = (
        "import os, signal\n"
        "from tileprof.core.outputs import atomic_writer\n"
        f"with atomic_writer({str(tmp_path / 'out.txt')!r}) as h:\n"
        "    h.write('partial'); h.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], timeout=60)
    assert proc.returncode == -9
    names = [p.name for p in tmp_path.iterdir()]
    assert len(names) == 1 and names[0].startswith(".out.txt.tileprof-"), names
    write_text(tmp_path / "other.txt", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt"]


def test_full_disk_is_one_line_and_leaves_nothing(
    tmp_path: Path, dump: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync

    def full(fd: int) -> None:
        real_fsync(fd)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outputs.os, "fsync", full)
    out = tmp_path / "out.json"
    message = assert_one_line_error("summary", dump, "--format", "json", "-o", out)
    assert "no space left on device" in message.lower()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump.json"]


def test_memory_error_is_one_line(dump: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tileprof.model.profile

    def exhausted(*_: object, **__: object) -> None:
        raise MemoryError

    monkeypatch.setattr(tileprof.model.profile.Profile, "summary", exhausted)
    assert_one_line_error("summary", dump, contains="out of memory")


def test_debug_still_shows_a_traceback(dump: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tileprof.model.profile

    def exhausted(*_: object, **__: object) -> None:
        raise MemoryError

    monkeypatch.setattr(tileprof.model.profile.Profile, "summary", exhausted)
    code, _, err, _ = invoke("--debug", "summary", dump)
    assert code == 2 and "Traceback" in err


def test_stale_removal_reads_the_clock_it_is_given_and_names_what_it_removed(
    tmp_path: Path,
) -> None:
    """A live writer's file is kept for exactly a day by the clock passed in (not the wall
    clock), is removed at that day, and the removed paths are returned."""
    temp = tmp_path / f".out.json.tileprof-{os.getpid()}-abc.tmp"
    temp.write_text("partial")
    os.utime(temp, (1_000_000.0, 1_000_000.0))
    assert remove_stale(tmp_path, now=1_000_000.0 + outputs.STALE_AFTER_S - 1) == []
    assert remove_stale(tmp_path, now=1_000_000.0 + outputs.STALE_AFTER_S) == [temp]
    assert not temp.exists()
    fresh = tmp_path / f".out.json.tileprof-{os.getpid()}-def.tmp"
    fresh.write_text("partial")
    assert remove_stale(tmp_path, now=time.time() + 2 * outputs.STALE_AFTER_S) == [fresh]


def test_stale_removal_dates_a_link_by_itself_and_skips_what_it_cannot_remove(
    tmp_path: Path,
) -> None:
    """A temporary name that is a link is dated by the link, not its target; one that is a
    folder (unlink fails) is left, and the sweep goes on."""
    target = tmp_path / "target"
    target.write_text("fresh")
    link = tmp_path / f".out.json.tileprof-{os.getpid()}-lnk.tmp"
    link.symlink_to(target)
    os.utime(link, (1_000.0, 1_000.0), follow_symlinks=False)
    folder = tmp_path / f".out.json.tileprof-{os.getpid()}-dir.tmp"
    folder.mkdir()
    os.utime(folder, (1_000.0, 1_000.0))
    assert remove_stale(tmp_path) == [link]
    assert target.exists() and folder.is_dir()


def test_a_pid_that_cannot_be_signalled_is_taken_as_alive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another user's process refuses the probe (EPERM): it exists, so its file is kept."""

    def refuse(pid: int, signal: int) -> None:
        raise PermissionError(errno.EPERM, "not permitted")

    monkeypatch.setattr(outputs.os, "kill", refuse)
    assert outputs._pid_alive(12345) is True


@pytest.mark.parametrize("path", [None, "-"])
def test_nothing_is_said_for_standard_output(
    path: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs.say_written(path)
    assert capsys.readouterr().out == ""
