"""Start-up imports (docs/architecture.md, "Start-up"): what a fresh process has loaded.

Each check runs in a new interpreter and reads its ``sys.modules``, since in this process
pytest and the other tests have imported everything already. No timing is asserted: the
figures are in docs/performance.md (``benchmarks/startup.py``).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.samples import sample, write_dump
from tileprof.commands.cli import _COMMANDS, cli
from tileprof.inputs import INPUTS

HEAVY = ("polars", "numpy", "rich", "jinja2", "deltalake", "msgspec", "matplotlib", "pyarrow")
"""Libraries that neither ``import tileprof`` nor ``tileprof --help`` may load."""
ROOT = Path(__file__).resolve().parent.parent


def loaded_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``code``."""
    script = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        check=True,
    )
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_importing_the_package_and_the_cli_loads_no_heavy_library() -> None:
    for code in (
        "import tileprof",
        "import tileprof.commands.cli",
        "import tileprof; tileprof.__version__",
    ):
        assert tops(loaded_after(code)) & set(HEAVY) == set(), code


def _allocator_setting(env: dict[str, str]) -> str:
    """The allocator setting jemalloc finds once the CLI and polars are imported (in a fresh
    process)."""
    code = "import os, tileprof.commands.cli, polars; print(os.environ['_RJEM_MALLOC_CONF'])"
    environ = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"} | env
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=environ,
        check=True,
    )  # fmt: skip
    return result.stdout.strip()


def test_the_cli_has_polars_hand_freed_pages_back_unless_told_otherwise() -> None:
    """Set before polars is imported (``import tileprof.commands.cli`` imports none, above),
    so polars' jemalloc reads it; polars puts its defaults first, and of an option given
    twice jemalloc takes the last. A user's own decay setting is kept; polars' default,
    which a parent process that imported polars hands down, is not a user's."""
    from tileprof.commands.cli import POLARS_DEFAULT, RETURN_FREED_PAGES, allocator_setting

    assert RETURN_FREED_PAGES == "dirty_decay_ms:0,muzzy_decay_ms:0"
    assert allocator_setting(None) == allocator_setting("") == RETURN_FREED_PAGES
    inherited = allocator_setting(POLARS_DEFAULT)
    assert inherited == f"{POLARS_DEFAULT},{RETURN_FREED_PAGES}"
    thp = f"{POLARS_DEFAULT},thp:always,metadata_thp:always"
    assert allocator_setting(thp).endswith(f"thp:always,{RETURN_FREED_PAGES}")
    assert allocator_setting("narenas:2") == f"narenas:2,{RETURN_FREED_PAGES}"
    mine = "dirty_decay_ms:5000"
    assert allocator_setting(mine) == mine
    assert allocator_setting(f"{POLARS_DEFAULT},{mine}") == f"{POLARS_DEFAULT},{mine}"
    # in a fresh process, as polars finds it
    assert _allocator_setting({}).endswith("," + RETURN_FREED_PAGES)
    assert _allocator_setting({"_RJEM_MALLOC_CONF": POLARS_DEFAULT}).endswith(
        "," + RETURN_FREED_PAGES
    )
    assert _allocator_setting({"_RJEM_MALLOC_CONF": mine}).endswith("," + mine)


def test_help_and_version_load_no_command_module() -> None:
    for argv in (["--help"], ["--version"], []):  # [] : bare ``tileprof`` prints the help
        code = (
            "from tileprof.commands.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    0"
        )
        loaded = loaded_after(code)
        commands = {m for m in loaded if m.startswith("tileprof.commands.")}
        assert commands == {"tileprof.commands.cli", "tileprof.commands._groups"}, argv
        assert tops(loaded) & set(HEAVY) == set(), argv


def test_the_checks_see_an_import() -> None:
    """The probe is real: a process that does import polars shows it."""
    assert "polars" in loaded_after("import tileprof; tileprof.Filters")


def test_every_public_name_still_resolves() -> None:
    code = (
        "import tileprof\n"
        "import tileprof.analyses.diff  # the analysis module must not hide tileprof.diff\n"
        "names = {n: type(getattr(tileprof, n)).__name__ for n in tileprof.__all__}\n"
        "assert set(tileprof.__all__) <= set(dir(tileprof))\n"
        "print(names)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == str(
        {
            "Filters": "type",
            "Profile": "type",
            "Summary": "type",
            "__version__": "str",
            "diff": "function",
            "flops": "module",
            "load": "function",
            "ops": "module",
            "sources": "module",
            "trace": "function",
        }
    )
    import tileprof

    assert tileprof.diff.__module__ == "tileprof.model.diff_inputs"
    assert tileprof.sources.load_runs.__module__ == "tileprof.inputs.sources"
    assert tileprof.ops.load_ops.__module__ == "tileprof.model.ops"
    assert tileprof.flops.op_work.__module__ == "tileprof.analyses.flops"
    assert "sys" not in dir(tileprof) and "Any" not in dir(tileprof)
    assert tileprof.load.__module__ == "tileprof.model.profile"
    assert tileprof.trace.__module__ == "tileprof.views.trace.public"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        tileprof.nothing  # noqa: B018


def test_help_lists_every_command_with_its_own_description() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    listed = result.output.split("Commands:\n", 1)[1]
    for name, (module, text) in _COMMANDS.items():
        command = importlib.import_module(module).command
        assert command.short_help == text, name  # the table states the command's own help
        assert f"  {name.ljust(10)}  {text}" in listed, name
    assert len(listed.strip().splitlines()) == len(_COMMANDS)


def test_a_warm_cached_diff_reads_documents_without_numpy_or_the_model(tmp_path: Path) -> None:
    dumps = [
        write_dump(tmp_path / f"{side}.json", [sample(0, 0, 10 + i, "gemm", useful=5)])
        for i, side in enumerate(("before", "after"))
    ]
    env = {"TILEPROF_CACHE_DIR": str(tmp_path / "cache")}
    run = (
        "from tileprof.commands.cli import main\n"
        f"try:\n    main(['diff', {str(dumps[0])!r}, {str(dumps[1])!r}, '--cache'])\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code"
    )
    cold = loaded_after(run, env)
    assert "numpy" in tops(cold) and "tileprof.model.profile" in cold  # parsed and summarised once
    assert len(list((tmp_path / "cache").glob("*.summary-*.json"))) == 2
    warm = loaded_after(run, env)
    assert "polars" in tops(warm)  # the diff itself is polars
    assert tops(warm) & {"numpy", "rich", "jinja2", "deltalake", "matplotlib"} == set()
    assert {f.module for f in INPUTS} & warm == set()  # detection imports no format module
    assert "tileprof.model.profile" not in warm


def test_history_loads_neither_numpy_nor_rich(tmp_path: Path) -> None:
    pytest.importorskip("deltalake")
    dump = write_dump(tmp_path / "run.json", [sample(0, 0, 10, "gemm", useful=5)])
    store = str(tmp_path / "store")
    added = CliRunner().invoke(cli, ["store", "add", str(dump), "--store", store, "--run", "r1"])
    assert added.exit_code == 0, added.output
    for output_format in ("table", "json"):
        code = (
            "from tileprof.commands.cli import main\n"
            f"try:\n    main(['history', '--store', {store!r}, '--format', {output_format!r}])\n"
            "except SystemExit as exc:\n    assert not exc.code, exc.code"
        )
        loaded = tops(loaded_after(code))
        assert {"polars", "deltalake"} <= loaded
        assert loaded & {"numpy", "rich", "jinja2", "matplotlib"} == set(), output_format


def test_summary_loads_only_what_reads_and_summarises_a_dump(tmp_path: Path) -> None:
    """Not the gatherer of ``runs``/``report`` (run sources, links, findings), not the store,
    not rich for a JSON document; and the modules that summarise import no numpy themselves
    (the decoder's hand-over in inputs/native.py is the one numpy user left on this path)."""
    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 10, "gemm", useful=5)])
    code = (
        "from tileprof.commands.cli import main\n"
        f"try:\n    main(['summary', {str(dump)!r}, '--format', 'json'])\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code"
    )
    loaded = loaded_after(code)
    unneeded = {
        "tileprof.model.gather",
        "tileprof.model.store.aggregate",
        "tileprof.model.store.tables",
        "tileprof.inputs.sources",
        "tileprof.analyses.links",
        "tileprof.analyses.findings",
    }
    assert loaded & unneeded == set()
    assert tops(loaded) & {"rich", "jinja2", "deltalake", "matplotlib"} == set()
    summarising = (
        "import tileprof.commands.summary, tileprof.model.profile, tileprof.model.reading\n"
        "import tileprof.analyses.summary, tileprof.views.renderers, tileprof.inputs._common"
    )
    assert "numpy" not in tops(loaded_after(summarising))
