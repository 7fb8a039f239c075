"""mabd.mpi: sharding over MPI ranks gives the single-machine batch bit for bit."""

import os
import shutil
import subprocess
import sys

import pytest

import mabd.mpi
from conftest import SOURCE_DIR


def test_shards_cover_the_worlds_once():
    for n in (1, 2, 7, 64):
        for size in (1, 2, 3, 5):
            got = [i for r in range(size) for i in mabd.mpi.shard(n, size, r)]
            assert got == list(range(n))
    with pytest.raises(ValueError):
        mabd.mpi.shard(4, 2, 2)


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="OpenMPI (openmpi-bin) not installed")
def test_two_ranks_equal_one_batch():
    pytest.importorskip("mpi4py")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self,vader", OMPI_MCA_plm_rsh_agent="")
    cmd = ["mpirun", "-n", "2", "--oversubscribe", sys.executable,
           str(SOURCE_DIR / "examples" / "batch_throughput.py"), "--mpi",
           "--scene", str(SOURCE_DIR / "scenes" / "heavy_chain.json"),
           "--worlds", "6", "--steps", "20"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "equal to one batch: True" in r.stdout, r.stdout
