"""Batches beyond one machine: shard n copies of a world over the ranks of an MPI communicator
(mpi4py; run under ``mpirun -n P``).

Rank r of P takes the contiguous worlds ``[r n / P, (r + 1) n / P)`` of the batch as a
``WorldBatch`` of its own, on ``threads`` threads; the results are gathered on rank 0 in global
world order. Every world is stepped exactly as a ``WorldBatch`` of all n on one machine would
step it, so the gathered arrays equal that batch's bit for bit.

    from mpi4py import MPI
    import mabd, mabd.mpi
    world = mabd.World.from_scene("scenes/pendulum.json")
    q, failed = mabd.mpi.run_sharded(world, 64, steps=500, comm=MPI.COMM_WORLD)
    if MPI.COMM_WORLD.rank == 0:
        print(q.shape, failed)    # (64, bodies, 12), global indices of failed worlds
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from ._mabd import World, WorldBatch


def shard(n: int, size: int, rank: int) -> range:
    """The global world indices of `rank` among `size` ranks (contiguous, sizes differ by at
    most one)."""
    if n <= 0 or size <= 0 or not 0 <= rank < size:
        raise ValueError(f"shard: need n > 0 and 0 <= rank < size, got n={n}, size={size}, "
                         f"rank={rank}")
    return range(rank * n // size, (rank + 1) * n // size)


def run_sharded(world: World, n: int, steps: int, comm, threads: int = 1, seed: int = 0,
                setup: Optional[Callable[[WorldBatch, Sequence[int]], None]] = None
                ) -> Tuple[Optional[np.ndarray], Optional[List[int]]]:
    """Steps n copies of `world` `steps` times, sharded over the ranks of `comm`.

    `setup(batch, indices)` is called on every rank with its own WorldBatch and the global
    indices of its worlds (``indices[j]`` is world j of `batch`), to set per-world parameters
    such as drive targets. Per-world seeds are ``seed + global index``. Returns, on rank 0, the
    (n, bodies, 12) affine coordinates of every world (m) and the sorted global indices of the
    worlds whose step failed (they keep their last valid state); (None, None) on the others. A
    rank without worlds (more ranks than worlds) takes part in the gather with nothing."""
    indices = shard(n, comm.size, comm.rank)
    part = None
    failed = []
    if len(indices) > 0:
        batch = WorldBatch(world, len(indices), threads=threads, seed=seed + indices.start)
        if setup is not None:
            setup(batch, list(indices))
        batch.step(steps)
        part = batch.q()
        failed = [indices[j] for j, f in enumerate(batch.failed) if f]
    parts = comm.gather((list(indices), part, failed), root=0)
    if comm.rank != 0:
        return None, None
    out = None
    failed_all: List[int] = []
    for idx, q, bad in parts:
        if q is None:
            continue
        if out is None:
            out = np.empty((n,) + q.shape[1:])
        out[idx] = q
        failed_all.extend(bad)
    return out, sorted(failed_all)
