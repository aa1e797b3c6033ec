"""Protobuf messages for many rows at once: numpy arrays of bytes, one message per row.

Building a million TracePackets as Python protobuf objects costs ~50 µs a sample (measured
with the ``perfetto`` package's upb-backed protos on the shared development machine: ~50 s
per million samples), far more than reading the dump. So the per-sample packets are assembled
here, column by column: every constant part (a whole ``TrackEvent`` fragment, an interned-id
block) is serialized by the protobuf library from the ``perfetto`` package's own message
classes, every field tag comes from the message descriptors, and only the per-row integers
are written as varints with numpy. A serialized message is the concatenation of its fields,
so joining serialized fragments of the same message type is itself a valid serialization
(protobuf's merge rule). Tests decode the result with the package's protos and compare it
field by field with packets built through them.

A batch's rows are built side by side in byte matrices (each row valid up to its own length)
and joined by one boolean selection (``compose``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

_WIRE_VARINT = 0
_WIRE_FIXED64 = 1
_WIRE_LEN = 2
_MAX_VARINT = 10


def _wire_type(field: FieldDescriptor) -> int:
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FIXED64):
        return _WIRE_FIXED64
    if field.type in (
        FieldDescriptor.TYPE_MESSAGE,
        FieldDescriptor.TYPE_BYTES,
        FieldDescriptor.TYPE_STRING,
    ):
        return _WIRE_LEN
    return _WIRE_VARINT


def tag(message: type[Message], name: str) -> bytes:
    """The field's key bytes (number and wire type from the descriptor)."""
    field = message.DESCRIPTOR.fields_by_name[name]
    key = (field.number << 3) | _wire_type(field)
    return varint_bytes(key)


def varint_matrix(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Base-128 varints of ``values`` (int64 as two's complement, like protobuf's int64): an
    ``(n, 10)`` byte matrix, row ``i`` valid up to ``lengths[i]``."""
    v = np.ascontiguousarray(values).astype(np.int64).view(np.uint64)
    groups = np.empty((v.size, _MAX_VARINT), dtype=np.uint8)
    lengths = np.ones(v.size, dtype=np.int64)
    rest = v.copy()
    seven = np.uint64(7)
    for j in range(_MAX_VARINT):
        groups[:, j] = (rest & np.uint64(0x7F)).astype(np.uint8)
        rest >>= seven
        more = rest != 0
        if not more.any():  # every varint ends here: the columns beyond are never read
            groups[:, j + 1 :] = 0
            break
        groups[:, j] |= more.astype(np.uint8) << 7
        lengths += more
    return groups, lengths


def varint_bytes(value: int) -> bytes:
    """One varint, for field keys."""
    groups, lengths = varint_matrix(np.array([value], dtype=np.int64))
    return groups[0, : lengths[0]].tobytes()


def place(matrix: np.ndarray, columns: np.ndarray, part: np.ndarray) -> None:
    """Write ``part``'s row ``i`` (or the ``(k,)`` bytes ``part``, on every row) into
    ``matrix`` row ``i`` from column ``columns[i]`` on, as one scatter (measured faster than
    block copies of rows grouped by column, or a scatter per column)."""
    rows, width = matrix.shape
    k = part.shape[-1]
    if rows and columns.min() == columns.max():  # one column for all (a first part): a slice
        column = int(columns[0])
        matrix[:, column : column + k] = part
        return
    starts = np.arange(0, rows * width, width, dtype=np.int64) + columns
    matrix.reshape(-1)[starts[:, None] + np.arange(k, dtype=np.int64)[None, :]] = part


class RowWriter:
    """Writes short per-row byte strings side by side into one ``(n, width)`` matrix, each row
    at its own cursor; a part is written at full width and the cursor moves by its length, so
    the next part overwrites whatever lies beyond."""

    def __init__(self, rows: int, width: int) -> None:
        self.matrix = np.empty((rows, width), dtype=np.uint8)  # past each cursor: never read
        self.cursor = np.zeros(rows, dtype=np.int64)

    def put(self, part: np.ndarray, lengths: np.ndarray | int) -> None:
        """Write ``part`` (``(n, k)``, or ``(k,)`` for the same bytes on every row)."""
        place(self.matrix, self.cursor, part)
        self.cursor += lengths

    def put_segment(
        self,
        prefix: bytes,
        parts: Sequence[tuple[np.ndarray, np.ndarray | int]],
        present: np.ndarray | None = None,
    ) -> None:
        """``prefix`` then each part (an ``(n, k)`` matrix valid up to its lengths, or
        ``(k,)`` bytes for every row), written as one piece; nothing where ``present`` is
        False. Joining the parts in a matrix first makes one scatter instead of several."""
        rows = self.cursor.size
        width = len(prefix) + sum(part.shape[-1] for part, _ in parts)
        piece = np.empty((rows, width), dtype=np.uint8)
        piece[:, : len(prefix)] = np.frombuffer(prefix, dtype=np.uint8)
        lengths = np.full(rows, len(prefix), dtype=np.int64)
        column = len(prefix)
        # While every part so far had a fixed size, the next starts at a fixed column; after
        # a part of varying size, each row's next part starts at that row's own length.
        fixed = True
        for part, size in parts:
            k = part.shape[-1]
            if fixed:
                piece[:, column : column + k] = part
                column += k
            else:
                place(piece, lengths, part)
            lengths += size
            fixed = fixed and np.isscalar(size) and size == k
        self.put(piece, lengths if present is None else np.where(present, lengths, 0))


def trimmed_varints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``varint_matrix`` cut to the widest varint present (fewer bytes to move)."""
    groups, lengths = varint_matrix(values)
    widest = int(lengths.max()) if lengths.size else 1
    return groups[:, :widest], lengths


def varint_size(values: np.ndarray) -> np.ndarray:
    """Bytes the varint of each (non-negative) value takes."""
    v = np.asarray(values, dtype=np.int64).view(np.uint64)
    size = np.ones(v.size, dtype=np.int64)
    for j in range(1, _MAX_VARINT):
        size += v >= np.uint64(1 << (7 * j))
    return size


@dataclass(frozen=True)
class Table:
    """Row ``i`` is entry ``index[i]``: ``entries`` holds each distinct byte string once,
    zero-padded to one width, so choosing rows is one gather of whole rows."""

    entries: np.ndarray  # (distinct, width) uint8
    sizes: np.ndarray  # int64, per entry
    index: np.ndarray  # int64, per row

    @property
    def lengths(self) -> np.ndarray:
        """Bytes of each row."""
        return self.sizes[self.index]

    def rows(self, start: int, count: int) -> Table:
        """Rows ``start`` … ``start + count - 1`` (the entries are shared)."""
        return Table(self.entries, self.sizes, self.index[start : start + count])

    def matrix(self) -> np.ndarray:
        """``(rows, width)``: each row's bytes, then zeros."""
        return self.entries[self.index]


def table(entries: Sequence[bytes], index: np.ndarray) -> Table:
    """Row ``i`` is ``entries[index[i]]``: constant fragments chosen per row."""
    sizes = np.array([len(e) for e in entries], dtype=np.int64)
    padded = np.zeros((len(entries), int(sizes.max(initial=0))), dtype=np.uint8)
    for row, entry in enumerate(entries):
        padded[row, : len(entry)] = np.frombuffer(entry, dtype=np.uint8)
    return Table(padded, sizes, np.asarray(index, dtype=np.int64))


def compose(blocks: Sequence[tuple[np.ndarray, np.ndarray]]) -> bytes:
    """Row after row, each block's row ``i`` cut to its length, the blocks in order.

    ``blocks`` are ``(matrix, lengths)`` pairs with one row per output row; the matrices are
    laid side by side and the bytes past each length masked out, so the whole batch comes
    out of one boolean selection (row-major order keeps every row's parts together).
    """
    cut = [(m[:, : int(lengths.max(initial=0))], lengths) for m, lengths in blocks]
    matrix = np.concatenate([m for m, _ in cut], axis=1)
    keep = np.concatenate(
        [np.arange(m.shape[1])[None, :] < lengths[:, None] for m, lengths in cut], axis=1
    )
    return matrix[keep].tobytes()
