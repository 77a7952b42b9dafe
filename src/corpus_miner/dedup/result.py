"""DedupResult: the per-document answer of deduplicate / query, in input order."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DedupResult:
    """is_duplicate[i]: document i shares a band key with an earlier (or indexed) document.

    duplicate_of[i]: ordinal (position in the indexed order) of the earliest such document, -1 when
    unique; only mode="minhash_lsh" can tell (None for lshbloom). duplicate_of_id maps it to the id
    given for that document. cluster[i]: smallest ordinal of the connected component of documents
    linked by shared band keys (minhash_lsh deduplicate only).
    """

    is_duplicate: np.ndarray
    duplicate_of: np.ndarray | None = None
    duplicate_of_id: list | None = None
    cluster: np.ndarray | None = None
    band_keys: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.is_duplicate)

    def part(self, start: int, stop: int) -> DedupResult:
        """The answer of documents start..stop-1 (ordinals in duplicate_of stay global)."""
        def cut(values):
            return None if values is None else values[start:stop]
        return DedupResult(self.is_duplicate[start:stop], cut(self.duplicate_of),
                           cut(self.duplicate_of_id), cut(self.cluster), cut(self.band_keys))

    @classmethod
    def concat(cls, parts: list[DedupResult]) -> DedupResult:
        """The answers of consecutive batches as one (at least one part; all of one kind)."""
        def joined(name, join):
            values = [getattr(part, name) for part in parts]
            return None if values[0] is None else join(values)

        def flat(lists):
            return [value for values in lists for value in values]

        return cls(np.concatenate([part.is_duplicate for part in parts]),
                   joined("duplicate_of", np.concatenate), joined("duplicate_of_id", flat),
                   joined("cluster", np.concatenate), joined("band_keys", np.concatenate))

    @property
    def keep(self) -> np.ndarray:
        return ~self.is_duplicate

    def unique_indices(self) -> np.ndarray:
        return np.flatnonzero(~self.is_duplicate)

    def clusters(self, min_size: int = 2) -> list[np.ndarray]:
        """Duplicate clusters as arrays of positions, ordered by their first member."""
        if self.cluster is None:
            return []
        order = np.argsort(self.cluster, kind="stable")
        labels = self.cluster[order]
        cuts = np.flatnonzero(np.diff(labels)) + 1
        return [group for group in np.split(order, cuts) if len(group) >= min_size]
