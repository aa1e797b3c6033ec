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

A ``Ragged`` is ``n`` byte strings: one flat ``uint8`` buffer and each row's length.
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


@dataclass(frozen=True)
class Ragged:
    """``lengths.size`` byte strings, stored back to back in ``data``."""

    data: np.ndarray  # uint8
    lengths: np.ndarray  # int64

    @property
    def rows(self) -> int:
        """How many byte strings."""
        return int(self.lengths.size)


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
        groups[:, j] |= more.astype(np.uint8) << 7
        lengths += more
    return groups, lengths


def varint_bytes(value: int) -> bytes:
    """One varint, for field keys."""
    groups, lengths = varint_matrix(np.array([value], dtype=np.int64))
    return groups[0, : lengths[0]].tobytes()


class RowWriter:
    """Writes short per-row byte strings side by side into one ``(n, width)`` matrix, each row
    at its own cursor; a part is written at full width and the cursor moves by its length, so
    the next part overwrites whatever lies beyond."""

    def __init__(self, rows: int, width: int) -> None:
        self.matrix = np.zeros((rows, width), dtype=np.uint8)
        self.cursor = np.zeros(rows, dtype=np.int64)
        self._base = np.arange(rows, dtype=np.int64) * width

    def put(self, part: np.ndarray, lengths: np.ndarray | int) -> None:
        """Write ``part`` (``(n, k)``, or ``(k,)`` for the same bytes on every row)."""
        k = part.shape[-1]
        index = (self._base + self.cursor)[:, None] + np.arange(k, dtype=np.int64)[None, :]
        self.matrix.reshape(-1)[index] = part
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
                index = (np.arange(rows, dtype=np.int64) * width + lengths)[:, None] + np.arange(k)
                piece.reshape(-1)[index] = part
            lengths += size
            fixed = fixed and np.isscalar(size) and size == k
        self.put(piece, lengths if present is None else np.where(present, lengths, 0))

    def finish(self) -> Ragged:
        """The rows written, as a ``Ragged``."""
        keep = np.arange(self.matrix.shape[1])[None, :] < self.cursor[:, None]
        return Ragged(self.matrix[keep], self.cursor.copy())


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


def table(entries: Sequence[bytes], index: np.ndarray) -> Ragged:
    """Row ``i`` is ``entries[index[i]]``: constant fragments chosen per row."""
    sizes = np.array([len(e) for e in entries], dtype=np.int64)
    flat = np.frombuffer(b"".join(entries), dtype=np.uint8)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    idx = np.asarray(index, dtype=np.int64)
    lengths = sizes[idx]
    return Ragged(flat[_gather_positions(starts[idx], lengths)], lengths)


def _gather_positions(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Flat positions ``starts[i] + 0 … lengths[i]-1`` for every row, row after row."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    out_starts = np.cumsum(lengths) - lengths
    return np.repeat(starts - out_starts, lengths) + np.arange(total, dtype=np.int64)


def concat(parts: Sequence[Ragged]) -> Ragged:
    """Row ``i`` is the concatenation of every part's row ``i``."""
    lengths = np.zeros(parts[0].rows, dtype=np.int64)
    for part in parts:
        lengths += part.lengths
    out = np.empty(int(lengths.sum()), dtype=np.uint8)
    row_starts = np.cumsum(lengths) - lengths
    before = np.zeros_like(lengths)
    for part in parts:
        if part.data.size:
            out[_gather_positions(row_starts + before, part.lengths)] = part.data
        before += part.lengths
    return Ragged(out, lengths)
