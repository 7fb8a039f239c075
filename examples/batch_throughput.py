#!/usr/bin/env python3
"""Throughput of mabd.WorldBatch: world-steps per second of n copies of a scene, stepped by a
serial Python loop over clones, by a WorldBatch on 1 and 2 threads, and (under mpirun) sharded
over MPI ranks with mabd.mpi.run_sharded. Every variant gives the same coordinates bit for bit;
the script checks it and exits 1 if not.

    export PYTHONPATH=build/python      # the package built by `make build` (or installed)
    /usr/bin/python3 examples/batch_throughput.py --scene scenes/heavy_chain.json --worlds 64
    mpirun -n 2 /usr/bin/python3 examples/batch_throughput.py --mpi
    # as root, OpenMPI also wants OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # and, with more ranks than cores, --oversubscribe

Each world gets its own parameter: world i's initial state is the scene stepped i times
(a sweep over start times), so that the copies differ.
"""

import argparse
import sys
import time

import numpy as np

import mabd
import mabd.mpi


def starts(world: mabd.World, n: int):
    """Initial states: the scene after 0, 1, ..., n - 1 steps."""
    w = world.clone()
    out = []
    for _ in range(n):
        out.append(w.save_state())
        w.step()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", default="scenes/heavy_chain.json")
    p.add_argument("--worlds", type=int, default=64)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--mpi", action="store_true", help="shard over the MPI ranks (mpirun)")
    a = p.parse_args()
    world = mabd.World.from_scene(a.scene)
    states = starts(world, a.worlds)

    def setup(batch, indices):
        batch.rollout([states[i] for i in indices], 0)  # restore each world's start

    if a.mpi:
        from mpi4py import MPI  # noqa: PLC0415 (only under mpirun)
        comm = MPI.COMM_WORLD
        comm.Barrier()
        t0 = time.perf_counter()
        q, failed = mabd.mpi.run_sharded(world, a.worlds, a.steps, comm, setup=setup)
        comm.Barrier()
        dt = time.perf_counter() - t0
        if comm.rank != 0:
            return 0
        ref = mabd.WorldBatch(world, a.worlds)
        setup(ref, list(range(a.worlds)))
        ref.step(a.steps)
        same = np.array_equal(q, ref.q()) and failed == []
        print(f"mpi, {comm.size} ranks: {a.worlds * a.steps / dt:12.0f} world-steps/s "
              f"(equal to one batch: {same})")
        return 0 if same else 1

    results = {}
    t0 = time.perf_counter()
    clones = []
    for s in states:
        w = world.clone()
        w.restore_state(s)
        w.step(a.steps)
        clones.append(w.q.copy())
    results["serial loop"] = (time.perf_counter() - t0, np.stack(clones))
    for threads in (1, 2):
        batch = mabd.WorldBatch(world, a.worlds, threads=threads)
        setup(batch, list(range(a.worlds)))
        t0 = time.perf_counter()
        batch.step(a.steps)
        results[f"batch, {threads} thread(s)"] = (time.perf_counter() - t0, batch.q())
    print(f"{a.scene}: {a.worlds} worlds x {a.steps} steps")
    ref = results["serial loop"]
    ok = True
    for name, (dt, q) in results.items():
        same = np.array_equal(q, ref[1])
        ok &= same
        print(f"{name:20s} {a.worlds * a.steps / dt:12.0f} world-steps/s  "
              f"x{ref[0] / dt:4.2f}  equal to the serial loop: {same}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
