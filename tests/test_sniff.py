"""Each format's recogniser (``tileprof.inputs._sniff``) on heads written here: what it takes
and, clause by clause, what it must not take. ``tests/test_registry.py`` checks that every
format's own files are detected; these check the edges of each rule."""

from __future__ import annotations

import pytest

from tileprof.inputs import _sniff
from tileprof.inputs._format import Content

NCU_HEADER = '"ID","Process ID","Kernel Name","Section Name","Metric Name","Metric Value"'
ROCPROF_HEADER = "Kind,Agent_Id,Queue_Id,Kernel_Name,Start_Timestamp,End_Timestamp"
TT_HEADER = "OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,CORE COUNT"


def _c(text: str | bytes) -> Content:
    return Content(text.encode() if isinstance(text, str) else text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"clockHz": 1, "samples": []}', True),
        ('  {"samples": []}\n', True),  # one line, but a whole dump: it has samples
        ('{"clockHz": 1,\n "samples": []}', True),  # first line no JSON value
        ('{"physicalTile": 1, "offset": 0}\n{"samples": 1}\n', False),  # NDJSON-shaped
        ('{"clockHz": 1}', False),  # no "samples"
        ('[{"samples": []}]', False),
    ],
)
def test_json_dump(text: str, expected: bool) -> None:
    assert _sniff.json_dump(_c(text)) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"physicalTile": 1, "offset": 0}\n', True),
        ('{"clockHz": 1000}\n{"physicalTile": 1}\n', True),
        ('{"tileCount": 4}\n', True),
        ('{"offset": 1}\n', False),  # names neither a sample's tile nor the device
        ('{"physicalTile": 1, "samples": []}\n', False),  # a whole dump on one line
        ('[{"physicalTile": 1}]\n', False),
        ("physicalTile,offset\n", False),
    ],
)
def test_ndjson_dump(text: str, expected: bool) -> None:
    assert _sniff.ndjson_dump(_c(text)) is expected


@pytest.mark.parametrize(
    ("data", "expected"), [(b"PAR1\x00\x01", True), (b"PAR", False), (b" PAR1", False)]
)
def test_parquet_dump(data: bytes, expected: bool) -> None:
    assert _sniff.parquet_dump(_c(data)) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000\n  PCIe slot, core_x\n1, 2\n", True),
        ("\nARCH: grayskull, CHIP_FREQ[MHz]: 1202\nPCIe slot, core_x", True),
        ("ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000", False),  # one line
        ("ARCH: wormhole_b0, FREQ: 1000\nPCIe slot, core_x\n", False),
        ("ARCH wormhole_b0, CHIP_FREQ[MHz]: 1000\nPCIe slot, core_x\n", False),
        ("ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000\ncore_x, PCIe slot\n", False),
    ],
)
def test_tt_device_log(text: str, expected: bool) -> None:
    assert _sniff.tt_device_log(_c(text)) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("physicalTile,offset,duration\n0,1,2\n", True),
        ("  physicalTile,offset\n", True),
        ("# exported by hand\nphysicalTile,offset\n0,1\n", True),
        ("# a comment\nphysicalTile,offset", True),  # no newline after the header
        ("# only a comment", False),
        ("# a comment\noffset,duration\nphysicalTile,x\n", False),  # the third line
        ("# a comment\n[physicalTile,offset]\n", False),
        ("# a comment\n{physicalTile,offset}\n", False),
        ("physicalTile offset\n", False),  # no comma
        ("offset,duration\n", False),
        ("[physicalTile,offset]\n", False),
        ('{"physicalTile": 1, "offset": 0}\n', False),
        (b"PAR1physicalTile,offset\n", False),
    ],
)
def test_csv_dump(text: str | bytes, expected: bool) -> None:
    assert _sniff.csv_dump(_c(text)) is expected


def test_key_rules() -> None:
    assert _sniff.has_tile_keys({"samples", "x"})
    assert _sniff.has_tile_keys({"clockHz"}) and _sniff.has_tile_keys({"tileCount"})
    assert not _sniff.has_tile_keys({"x", "physicalTile"})
    assert _sniff.is_summary_doc({"matchedSampleCount", "groups", "x"})
    assert _sniff.is_summary_doc({"matchedSampleCount", "groups"})  # exactly those
    assert not _sniff.is_summary_doc({"groups"})
    assert not _sniff.is_summary_doc({"matchedSampleCount"})
    assert _sniff.is_trace({"traceEvents", "x"}) and not _sniff.is_trace({"x"})
    for key in ("deviceProperties", "schemaVersion", "traceName", "displayTimeUnit"):
        assert _sniff.has_trace_keys({key, "x"}), key
    assert not _sniff.has_trace_keys({"traceEvents"})
    assert _sniff.is_latency_doc({"held_out"}) and not _sniff.is_latency_doc({"x"})
    assert _sniff.is_energy_doc({"hardware", "gemm_8192"})
    assert _sniff.is_energy_doc({"hardware", "ciresan_mnist_int8_inference", "x"})
    assert not _sniff.is_energy_doc({"hardware", "x"})
    assert not _sniff.is_energy_doc({"gemm_8192", "ciresan_mnist_int8_inference"})
    assert _sniff.is_run_doc({"runs"}) and not _sniff.is_run_doc({"run"})


def test_is_summary_head() -> None:
    assert _sniff.is_summary_head(b'  \n{"matchedSampleCount": 3, "groups": []}')
    assert not _sniff.is_summary_head(b'{"groups": []}')
    assert not _sniff.is_summary_head(b'{"matchedSampleCount": 3}')
    assert not _sniff.is_summary_head(b'["matchedSampleCount", "groups"]')


def test_nsys_header_line() -> None:
    assert _sniff.nsys_header_line(["Generating", "Time (%),Total Time (ns)"]) == 1
    assert _sniff.nsys_header_line(["\ufeffTime(%),Total Time"]) == 0
    assert _sniff.nsys_header_line(["x", "Time (%),a", "Time(%),b"]) == 1  # the first
    assert _sniff.nsys_header_line(["Time (%) Total"]) is None
    assert _sniff.nsys_header_line([" x Time (%),a"]) is None
    assert _sniff.nsys_header_line(["XTime (%),a"]) is None  # only a BOM is dropped
    assert _sniff.nsys_header_line([]) is None


def test_nsys_report_within_200_lines() -> None:
    assert _sniff.nsys_report(_c("Generating report\n\nTime (%),Total Time (ns)\n1,2\n"))
    assert _sniff.nsys_report(_c("x\n" * 199 + "Time (%),a\n"))  # line 200
    assert not _sniff.nsys_report(_c("x\n" * 200 + "Time (%),a\n"))  # line 201
    assert not _sniff.nsys_report(_c('{"a": "\nTime (%),a\n"}'))
    assert not _sniff.nsys_report(_c('["\nTime (%),a\n"]'))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("target,workload,kernel,time_us", True),
        (" target , workload,kernel, time_us ,calls", True),
        ("target,workload,kernel", False),
        ("workload,kernel,time_us", False),
        ("target,kernel,time_us", False),
        ("target,workload,time_us", False),
        ("", False),
    ],
)
def test_is_run_csv_header(line: str, expected: bool) -> None:
    assert _sniff.is_run_csv_header(line) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('  [{"target": "x"}]', True),
        ('{"runs": []}', False),
        ("\n  \ntarget,workload,kernel,time_us\nx,y,k,1\n", True),
        ("target workload kernel time_us\n", False),  # no comma
        ("target;workload;kernel;time_us\n", False),
        ("x,y\ntarget,workload,kernel,time_us\n", False),  # not the first line
        ("", False),
        ("{,target,workload,kernel,time_us\n", False),  # a JSON object's opening
    ],
)
def test_run_table(text: str, expected: bool) -> None:
    assert _sniff.run_table(_c(text)) is expected


@pytest.mark.parametrize("table", [t.decode() for t in _sniff.NSYS_TABLES])
def test_nsys_sqlite_needs_the_magic_and_a_table(table: str) -> None:
    magic = _sniff.SQLITE_MAGIC
    assert _sniff.nsys_sqlite(_c(magic + b"\x00" * 40 + f"CREATE TABLE {table}X".encode()))
    assert not _sniff.nsys_sqlite(_c(b"SQLite format 2\x00" + table.encode()))
    assert not _sniff.nsys_sqlite(_c(magic + b"CREATE TABLE other"))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\xef\xbb\xbfa , b ,c\n1,2,3\n", ["a", "b", "c"]),  # the BOM and spaces dropped
        (b"\n\n \nx, y\n", ["x", "y"]),  # the first line that is not blank
        (b'"Kernel Name","ID"\n', ["Kernel Name", "ID"]),
        (b"Xa,\xef\xbb\xbfXb\n", ["Xa", "Xb"]),  # only a BOM is dropped
        (b'{"a": 1}', []),
        (b'[["a", "b"]]', []),
        (b"SQLite format 3\x00a,b\n", []),
        (b"\n \n", []),
    ],
)
def test_csv_header(data: bytes, expected: list[str]) -> None:
    assert _sniff.csv_header(_c(data)) == expected


def test_rocprof_trace_needs_every_dispatch_column() -> None:
    assert _sniff.rocprof_trace(_c(ROCPROF_HEADER + "\n"))
    assert _sniff.rocprof_trace(_c(",".join(sorted(_sniff.ROCPROF_REQUIRED)) + "\n"))  # only
    for column in sorted(_sniff.ROCPROF_REQUIRED):
        header = ",".join(c for c in ROCPROF_HEADER.split(",") if c != column)
        assert not _sniff.rocprof_trace(_c(header + "\n")), column


def test_ncu_header_line() -> None:
    assert _sniff.ncu_header_line(["==PROF== Connected", NCU_HEADER]) == 1
    assert _sniff.ncu_header_line([NCU_HEADER.replace('"', "")]) == 0
    only = "ID," + ",".join(sorted(_sniff.NCU_REQUIRED - {"ID"}))
    assert _sniff.ncu_header_line([only]) == 0  # exactly the required columns
    assert _sniff.ncu_header_line(['"ID","Kernel Name"', NCU_HEADER]) == 1  # the full one
    assert _sniff.ncu_header_line([" " + NCU_HEADER]) is None
    assert _sniff.ncu_header_line([NCU_HEADER.replace('"Metric Value"', '"Value"')]) is None
    assert _sniff.ncu_header_line([]) is None


def test_ncu_report_within_200_lines() -> None:
    assert _sniff.ncu_report(_c("==PROF== x\n" + NCU_HEADER + "\n"))
    assert _sniff.ncu_report(_c("x\n" * 199 + NCU_HEADER + "\n"))  # line 200
    assert not _sniff.ncu_report(_c("x\n" * 200 + NCU_HEADER + "\n"))  # line 201
    assert not _sniff.ncu_report(_c("{\n" + NCU_HEADER + "\n"))
    assert not _sniff.ncu_report(_c("[\n" + NCU_HEADER + "\n"))
    assert not _sniff.ncu_report(_c(b"SQLite format 3\x00\n" + NCU_HEADER.encode() + b"\n"))


def test_tenstorrent_report_needs_every_op_column() -> None:
    assert _sniff.tenstorrent_report(_c(TT_HEADER + "\n"))
    assert _sniff.tenstorrent_report(_c(",".join(sorted(_sniff.TENSTORRENT_REQUIRED))))  # only
    for column in sorted(_sniff.TENSTORRENT_REQUIRED):
        header = ",".join(c for c in TT_HEADER.split(",") if c != column)
        assert not _sniff.tenstorrent_report(_c(header + "\n")), column


NOC_EVENT = '{"proc": "BRISC", "sx": 1, "sy": 2, "timestamp": 976158559117'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f'[\n {NOC_EVENT}, "zone": "BRISC-KERNEL"}}\n]', True),
        (f'  [{NOC_EVENT}, "op_name": "AllGatherAsync", "run_host_id": 2}}]', True),
        (f"[{NOC_EVENT}}}, [1]]", True),  # only the first event is looked at
        ('[{"proc": "BRISC", "sx": 1, "timestamp": 5}]', False),  # no sy
        ('[{"target": "H100", "workload": "w", "kernel": "k", "time_us": 1}]', False),
        (f'[{NOC_EVENT}, "zone": {{"a": 1}}}}]', False),  # not flat: not a NoC event
        (f'[{NOC_EVENT}, "n": nan}}]', False),  # not JSON
        (f"[[{NOC_EVENT}}}]]", False),
        (f'{{"events": [{NOC_EVENT}}}]}}', False),
        ("[]", False),
    ],
)
def test_noc_trace(text: str, expected: bool) -> None:
    assert _sniff.noc_trace(_c(text)) is expected
