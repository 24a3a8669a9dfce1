"""The instances of this paper: its one seeding rule and its planted streams (shared by the sparsify_eval and sliding
steps, so that the sliding window runs over exactly the hyperedges of the sweep's instance of the same length)."""
from __future__ import annotations

import zlib

import numpy as np

from .hypergraph import planted_hypergraph_stream

ORDERS = ("random", "bridges_last")  # arrival orders; an order's position is part of its instance's seed


def rng_for(p: dict, family: str, seed: int, m: int, *more: int) -> np.random.Generator:
    """The one seeding rule of this paper: (data seed, family, seed, m, ...) -> an independent stream of numbers.

    The family enters by a stable checksum of its name, so that adding a family changes no other instance."""
    return np.random.default_rng([int(p["seed"]), zlib.crc32(family.encode()), int(seed), int(m), *map(int, more)])


def make_stream(p: dict, family: str, seed: int, m: int, order: str = "random") -> dict:
    """The planted stream of spec 2.3. Both orders of one (family, seed, m) hold the same hyperedges."""
    return planted_hypergraph_stream(n=p["n"], m=m, r=p["r"], seed=rng_for(p, family, seed, m), k=p["k"],
                                       n_bridges=p["n_bridges"], p_in=p["p_in"], w_range=(p["w_min"], p["w_max"]),
                                       order=order)
