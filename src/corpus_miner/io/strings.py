"""StringList: many strings as two flat arrays (UTF-8 bytes + int64 offsets), indexable like a list.

Vocabularies and document ids can have millions of entries; as Python str objects they would cost
~60 bytes each and could not be memory-mapped. Here they cost their bytes plus 8, save as two
`.npy` files (no pickle) and decode one string only when it is asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa


class StringList(Sequence[str]):
    """Immutable sequence of str backed by `offsets` (int64, n+1) and `data` (uint8 UTF-8)."""

    __slots__ = ("offsets", "data", "_index")

    def __init__(self, offsets: np.ndarray, data: np.ndarray):
        self.offsets = offsets
        self.data = data
        self._index: dict[str, int] | None = None

    @classmethod
    def from_strings(cls, strings: Iterable[str]) -> StringList:
        encoded = [s.encode("utf-8", "surrogatepass") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
        return cls(offsets, data)

    @classmethod
    def from_arrow(cls, arrays: Iterable[pa.Array]) -> StringList:
        """Concatenate Arrow string arrays (no nulls) without going through Python str."""
        offset_parts = [np.zeros(1, dtype=np.int64)]
        data_parts = []
        total = 0
        for arr in arrays:
            arr_offsets, arr_data = arrow_string_buffers(arr)
            offset_parts.append(arr_offsets[1:] - arr_offsets[0] + total)
            data_parts.append(arr_data[arr_offsets[0]:arr_offsets[-1]])
            total += int(arr_offsets[-1] - arr_offsets[0])
        offsets = np.concatenate(offset_parts)
        data = np.concatenate(data_parts) if data_parts else np.zeros(0, dtype=np.uint8)
        return cls(offsets, data)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"index {i} out of range for {n} strings")
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        return bytes(self.data[lo:hi]).decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        raw = self.data.tobytes()
        bounds = self.offsets.tolist()
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            yield raw[lo:hi].decode("utf-8", "surrogatepass")

    def index(self, value: str, *args) -> int:
        """Position of `value` (a dict built on first use, so repeated lookups are O(1))."""
        if self._index is None:
            index: dict[str, int] = {}
            for i, s in enumerate(self):
                index.setdefault(s, i)
            self._index = index
        try:
            return self._index[value]
        except KeyError:
            raise ValueError(f"{value!r} is not in the list") from None

    def __contains__(self, value) -> bool:
        try:
            self.index(value)
        except ValueError:
            return False
        return True

    def to_list(self) -> list[str]:
        return list(self)

    def to_arrow(self) -> pa.Array:
        return pa.LargeStringArray.from_buffers(
            len(self), pa.py_buffer(np.ascontiguousarray(self.offsets)),
            pa.py_buffer(np.ascontiguousarray(self.data)))

    def __eq__(self, other) -> bool:
        if isinstance(other, StringList):
            return (np.array_equal(self.offsets - self.offsets[0], other.offsets - other.offsets[0])
                    and np.array_equal(self.data[self.offsets[0]:self.offsets[-1]],
                                       other.data[other.offsets[0]:other.offsets[-1]]))
        if isinstance(other, (list, tuple)):
            return self.to_list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable backing arrays

    def __repr__(self) -> str:
        head = ", ".join(repr(s) for s in self[:5])
        more = ", ..." if len(self) > 5 else ""
        return f"StringList([{head}{more}], n={len(self)})"


def arrow_string_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(int64 offsets of len(arr)+1, uint8 data) of a string/large_string array, zero-copy data."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    offset_dtype: type[np.signedinteger]
    if pa.types.is_string(arr.type):
        offset_dtype = np.int32
    elif pa.types.is_large_string(arr.type):
        offset_dtype = np.int64
    else:
        raise TypeError(f"expected a string array, got {arr.type}")
    _, offsets_buf, data_buf = arr.buffers()
    n = len(arr)
    if offsets_buf is None or n == 0:
        offsets = np.zeros(n + 1, dtype=np.int64)
    else:
        raw = np.frombuffer(offsets_buf, dtype=offset_dtype)[arr.offset:arr.offset + n + 1]
        offsets = raw.astype(np.int64)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(
        0, dtype=np.uint8)
    return offsets, data


def string_array(values: Sequence[str | None]) -> pa.Array:
    """pa.array(values, pa.string()), built from buffers: pa.array's conversion of Python
    objects imports pandas where it is installed (0.1-0.3 s of a short command's start)."""
    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    n = len(encoded)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    if offsets[-1] >= 2**31:  # beyond 32-bit offsets: Arrow's own conversion (chunks)
        return pa.array(values, pa.string())
    valid = np.fromiter((v is not None for v in values), dtype=bool, count=n)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.astype(np.int32)),
                                       pa.py_buffer(b"".join(encoded)), validity_bitmap(valid),
                                       int(n - valid.sum()))


def validity_bitmap(valid: np.ndarray) -> pa.Buffer | None:
    """The Arrow validity bitmap of a bool array (None when every value is valid)."""
    return None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))


def bool_array(values: np.ndarray) -> pa.BooleanArray:
    """pa.array(values) of a numpy bool array, built from its bits (see string_array)."""
    values = np.asarray(values, dtype=bool)
    bits = np.packbits(values, bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
