"""The generic run table (``inputs/gpu/run_table.py``), held to rows and errors written by hand.

Every expected value below is read off the CSV or JSON text in the test, not computed by the
reader (issue 38: each assertion names the value a mutant of the reader would change).
"""

from __future__ import annotations

from typing import Any

import pytest

from tileprof.core.errors import InputError
from tileprof.inputs.gpu import run_table

# The input columns every row of the run table carries, as the reader fills them (the derived
# ones, speedup and onwards, are run_schema's and not checked here).
BLANK: dict[str, Any] = {
    "target": None,
    "target_kind": "gpu",
    "device": None,
    "source": None,
    "workload": None,
    "implementation": None,
    "kernel": None,
    "op_family": None,
    "dtype": None,
    "shape": None,
    "per": "call",
    "time_us": None,
    "calls": None,
    "total_us": None,
    "p50_us": None,
    "p95_us": None,
    "max_us": None,
    "mac": None,
    "energy_j": None,
    "energy_raw_j": None,
    "baseline_implementation": None,
    "baseline_time_us": None,
    "bytes": None,
}


def _rows(name: str, text: str | bytes) -> list[dict[str, Any]]:
    data = text.encode() if isinstance(text, str) else text
    parsed = run_table.parse(f"some/dir/{name}", data)
    assert parsed.kind == "run table"
    assert parsed.metadata == {}
    return [{k: row[k] for k in BLANK} for row in parsed.frame.iter_rows(named=True)]


def _error(name: str, text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    with pytest.raises(InputError) as caught:
        run_table.parse(f"some/dir/{name}", data)
    return str(caught.value)


EVERY_COLUMN = (
    "target,target_kind,device,workload,implementation,kernel,op_family,dtype,shape,per,"
    "time_us,calls,total_us,p50_us,p95_us,max_us,mac,energy_j,energy_raw_j,"
    "baseline_implementation,baseline_time_us,peak_fraction,bytes\n"
    " Chip A ,tile, 3 ,w1,mine,k1,gemm,bf16,2x3,step,"
    "2.5,4,10.0,2.25,3.5,4.0,7,0.5,0.75,"
    "theirs,5.0,0.125,64\n"
)


def test_every_column_of_a_csv_row_as_written() -> None:
    (row,) = _rows("runs.csv", EVERY_COLUMN)
    assert row == {
        "target": "Chip A",
        "target_kind": "tile",
        "device": "3",
        "source": "runs.csv: line 2",
        "workload": "w1",
        "implementation": "mine",
        "kernel": "k1",
        "op_family": "gemm",
        "dtype": "bf16",
        "shape": "2x3",
        "per": "step",
        "time_us": 2.5,
        "calls": 4,
        "total_us": 10.0,
        "p50_us": 2.25,
        "p95_us": 3.5,
        "max_us": 4.0,
        "mac": 7,
        "energy_j": 0.5,
        "energy_raw_j": 0.75,
        "baseline_implementation": "theirs",
        "baseline_time_us": 5.0,
        "bytes": 64,
    }


def test_empty_cells_are_null_and_the_defaults_fill_target_kind_and_per() -> None:
    text = (
        "\ufefftarget,workload,kernel,time_us,target_kind,per,calls,mac,energy_j\n"
        "A,,,1,,,,,\n"
        "\n"
        "B,w,k,2e3, ,  ,0,0,0\n"
    )
    first, second = _rows("runs.csv", text)
    # the BOM is not part of the first column's name; the blank line 3 is skipped but counted
    assert first == BLANK | {
        "target": "A",
        "source": "runs.csv: line 2",
        "time_us": 1.0,
        "op_family": "other",
    }
    assert second == BLANK | {
        "target": "B",
        "source": "runs.csv: line 4",
        "workload": "w",
        "kernel": "k",
        "time_us": 2000.0,
        "calls": 0,
        "mac": 0,
        "energy_j": 0.0,
        "op_family": "other",
    }


def test_a_quoted_cell_over_two_lines_and_a_header_with_spaces() -> None:
    text = ' target , workload,kernel,time_us\nA,w,"k\nk",1\nB,w,k,2\n'
    first, second = _rows("runs.csv", text)
    assert (first["kernel"], first["source"]) == ("k\nk", "runs.csv: line 3")
    assert (second["target"], second["source"]) == ("B", "runs.csv: line 4")


def test_a_long_kernel_name_is_read() -> None:
    name = "k" * 200_000  # past the csv module's default field size limit of 131,072
    (row,) = _rows("runs.csv", f"target,workload,kernel,time_us\nA,w,{name},1\n")
    assert row["kernel"] == name


def test_json_object_and_bare_list() -> None:
    obj = (
        '  {"runs": [{"target": "A", "workload": null, "kernel": "k", "time_us": 1},'
        ' {"target": "B", "workload": "w", "kernel": null, "time_us": 2.5, "per": "",'
        ' "target_kind": "tile", "calls": 3, "bytes": 8}]}'
    )
    first, second = _rows("runs.json", obj)
    assert first == BLANK | {
        "target": "A",
        "kernel": "k",
        "time_us": 1.0,
        "source": "runs.json: $.runs[0]",
        "op_family": "other",
    }
    assert second == BLANK | {
        "target": "B",
        "workload": "w",
        "time_us": 2.5,
        "target_kind": "tile",
        "calls": 3,
        "bytes": 8,
        "source": "runs.json: $.runs[1]",
        "op_family": "other",
    }
    bare = '\n [{"target": "A", "workload": "w", "kernel": "k", "time_us": 1, "per": "GEMM"}]'
    (row,) = _rows("list.json", bare)
    assert (row["source"], row["per"]) == ("list.json: $[0]", "GEMM")


def test_a_json_table_keeps_its_limits() -> None:
    head = '{"runs": [{"target": "A", "workload": "w", "kernel": "k", "time_us": 1'
    assert _error("r.json", head + ', "colour": 1}]}') == (
        "some/dir/r.json: $.runs[0]: object contains unknown field `colour`"
    )
    assert _error("r.json", head + ', "mac": -1}]}') == (
        "some/dir/r.json: $.runs[0] (mac): negative value -1"
    )
    assert _error("r.json", f'[{head[10:]}, "bytes": {2**63}}}]') == (
        f"some/dir/r.json: $[0] (bytes): {2**63} is beyond 2^63 - 1"
    )
    assert _error("r.json", head + ', "dtype": "f64"}]}') == (
        "some/dir/r.json: $.runs[0] (dtype): 'f64' is not one of f32, tf32, f16, bf16, f8, int8, b1"
    )


def test_the_largest_counts_are_kept() -> None:
    top = 2**63 - 1
    (row,) = _rows("r.csv", f"target,workload,kernel,time_us,mac,bytes\nA,w,k,0,{top},{top}\n")
    assert (row["mac"], row["bytes"], row["time_us"]) == (top, top, 0.0)


HEADER = "target,workload,kernel,time_us"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "target,workload,kernel,time_us,kernel\n",
            "line 1, column 5: column 'kernel' is named twice",
        ),
        ("target,workload,kernel,time_us,colour\n", "line 1, column 5: unknown column 'colour'"),
        ("Target,workload,kernel,time_us\n", "line 1, column 1: unknown column 'Target'"),
        ("target,kernel,time_us\n", "line 1: missing column 'workload'"),
        ("target,workload,kernel\n", "line 1: missing column 'time_us'"),
        (f"{HEADER}\nA,w,k,1\nA,w,k\n", "line 3: 3 fields, expected 4"),
        (f"{HEADER}\nA,w,k,1,2\n", "line 2: 5 fields, expected 4"),
        (f"{HEADER},calls\nA,w,k,1,2.0\n", "line 2, column 5 (calls): not a number: '2.0'"),
        (f"{HEADER},mac\nA,w,k,1, x \n", "line 2, column 5 (mac): not a number: ' x '"),
        (f"{HEADER},bytes\nA,w,k,1,1e3\n", "line 2, column 5 (bytes): not a number: '1e3'"),
        (f"{HEADER},p95_us\nA,w,k,1,fast\n", "line 2, column 5 (p95_us): not a number: 'fast'"),
        (f"{HEADER}\n,w,k,1\n", "line 2, column 1: target is empty"),
        ("workload,kernel,target,time_us\nw,k,A, \n", "line 2, column 4: time_us is empty"),
        (
            f"{HEADER},op_family\nA,w,k,1,gemv\n",
            "line 2 (op_family): 'gemv' is not one of "
            "gemm, attention, softmax, reduce, elementwise, cast, copy, fill, layout, exchange, "
            "train_step, inference, other",
        ),
        (
            f"{HEADER},target_kind\nA,w,k,1,cpu\n",
            "line 2 (target_kind): 'cpu' is not one of tile, gpu",
        ),
        (f"{HEADER}\nA,w,k,inf\n", "line 2 (time_us): not a finite number: inf"),
        (f"{HEADER},energy_j\nA,w,k,1,nan\n", "line 2 (energy_j): not a finite number: nan"),
        (
            f"{HEADER},baseline_time_us\nA,w,k,1,-0.5\n",
            "line 2 (baseline_time_us): negative value -0.5",
        ),
        (f"{HEADER},calls\nA,w,k,1,-2\n", "line 2 (calls): negative value -2"),
        (f"{HEADER},mac\nA,w,k,1,{2**63}\n", f"line 2 (mac): {2**63} is beyond 2^63 - 1"),
        (f'{HEADER}\nA,w,"k"x,1\n', "line 2: malformed CSV: ',' expected after '\"'"),
        (f'{HEADER}\nA,w,k,1\nB,w,"k\n', "line 3: malformed CSV: unexpected end of data"),
        ('target,"workload"x,kernel,time_us\n', "line 1: malformed CSV: ',' expected after '\"'"),
    ],
)
def test_a_csv_error_names_its_line_and_column(text: str, message: str) -> None:
    assert _error("runs.csv", text) == f"some/dir/runs.csv: {message}"


def test_bytes_that_are_not_utf8_are_replaced_not_refused() -> None:
    data = b"target,workload,kernel,time_us\nA,w,k\xff\xfe,1\n"
    (row,) = _rows("runs.csv", data)
    assert row["kernel"] == "k\ufffd\ufffd"


def test_a_float_above_2_63_is_a_float_not_a_count() -> None:
    """The 2^63 − 1 bound is the Int64 columns' (calls, mac, bytes); a time is a Float64."""
    (row,) = _rows("runs.csv", "target,workload,kernel,time_us,total_us\nA,w,k,1e19,2e19\n")
    assert (row["time_us"], row["total_us"]) == (1e19, 2e19)


def test_a_bare_lists_decoding_error_names_the_file_and_the_place() -> None:
    text = '[{"target": 1, "workload": "w", "kernel": "k", "time_us": 1}]'
    assert _error("list.json", text) == (
        "some/dir/list.json: $[0].target: expected `str`, got `int`"
    )
