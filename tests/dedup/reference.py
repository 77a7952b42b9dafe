"""Plain-Python references for the dedup kernels: slow, obviously correct, written from the docs."""

from __future__ import annotations

M64 = (1 << 64) - 1
P61 = (1 << 61) - 1
EMPTY = M64


def splitmix64(x: int) -> int:
    x &= M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def hash_bytes(data: bytes) -> int:
    h = 0xCBF29CE484222325 ^ len(data)
    for start in range(0, len(data), 8):
        h = splitmix64(h ^ int.from_bytes(data[start:start + 8].ljust(8, b"\0"), "little"))
    return h


def normalize(text: str) -> str:
    return " ".join(text.lower().split())


def shingles(text: str, size: int, kind: str = "char") -> list[int]:
    text = normalize(text)
    units = list(text) if kind == "char" else text.split(" ") if text else []
    joiner = "" if kind == "char" else " "
    if not units:
        return []
    if len(units) < size:
        return [hash_bytes(joiner.join(units).encode())]
    return [hash_bytes(joiner.join(units[i:i + size]).encode())
            for i in range(len(units) - size + 1)]


def capped(hashes: list[int], max_shingles: int | None) -> list[int]:
    if max_shingles is None or len(hashes) <= max_shingles:
        return hashes
    return sorted(set(hashes))[:max_shingles]


def minhash(hashes: list[int], a: list[int], b: list[int]) -> list[int]:
    if not hashes:
        return [EMPTY] * len(a)
    return [min((ai * (h % P61) + bi) % P61 for h in hashes) for ai, bi in zip(a, b)]


def densify_source(bin_index: int, attempt: int, num_bins: int, salt: int) -> int:
    return splitmix64(salt ^ (bin_index << 32) ^ attempt) % num_bins


def oph(hashes: list[int], a0: int, b0: int, num_perm: int, salt: int) -> list[int]:
    bins = [EMPTY] * num_perm
    for h in hashes:
        g = (a0 * (h % P61) + b0) % P61
        j = ((g >> 29) * num_perm) >> 32
        bins[j] = min(bins[j], g)
    if not hashes:
        return bins
    out = list(bins)
    for j in range(num_perm):
        attempt = 0
        while out[j] == EMPTY:
            src = densify_source(j, attempt, num_perm, salt)
            if bins[src] != EMPTY:
                out[j] = bins[src]
            attempt += 1
    return out


def band_key(band: int, values: list[int]) -> int:
    h = splitmix64((band + 0x9E3779B97F4A7C15) & M64)
    for v in values:
        h = splitmix64(h ^ v)
    return h


def bloom_positions(key: int, num_bits: int, num_hashes: int) -> list[int]:
    start = splitmix64(key ^ 0x243F6A8885A308D3) % num_bits
    step = 1 + splitmix64(key ^ 0x13198A2E03707344) % (num_bits - 1) if num_bits > 1 else 1
    return [(start + i * step) % num_bits for i in range(num_hashes)]


def dedup_rule(band_keys: list[list[int]]) -> tuple[list[bool], list[int]]:
    """Brute force: duplicate iff a key was seen in an earlier doc; duplicate_of = earliest such
    doc."""
    first_doc: dict[int, int] = {}
    is_dup, dup_of = [], []
    for d, keys in enumerate(band_keys):
        matches = [first_doc[k] for k in keys if k in first_doc]
        is_dup.append(bool(matches))
        dup_of.append(min(matches) if matches else -1)
        for k in keys:
            first_doc.setdefault(k, d)
    return is_dup, dup_of


def jaccard(a, b) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


def choose_bands(threshold: float, num_perm: int, fp_weight: float = 0.5,
                 fn_weight: float = 0.5) -> tuple[int, int]:
    """Brute force over every (bands, rows) with bands * rows <= num_perm: the first pair, in
    (bands, rows) order, that lowers the running best weighted error by more than 1e-15."""
    from corpus_miner.dedup.banding import banding_errors

    best, best_error = (1, num_perm), float("inf")
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            fp, fn = banding_errors(threshold, bands, rows)
            error = fp_weight * fp + fn_weight * fn
            if error < best_error - 1e-15:
                best, best_error = (bands, rows), error
    return best
