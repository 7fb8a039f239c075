"""mabd: articulated multibody dynamics with affine bodies.

Units are SI throughout (m, kg, s, rad, N, N m); vectors are in the world frame unless a
docstring says otherwise; quaternions are (w, x, y, z).

    import mabd
    world = mabd.World.from_scene("scenes/pendulum.json")
    world.step(1000)                 # 1 s at dt = 1e-3, the GIL released
    print(world.time, world.positions()[0])

Arrays: ``World.q`` and ``World.qdot`` are read-only numpy *views* of the world's storage
(they follow every step; while one lives, calls that may move the storage raise BufferError);
every other array is a copy. See the World docstring.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Optional

from . import _mabd
from ._mabd import *  # noqa: F401,F403  (the extension's classes and functions)
from ._mabd import Recorder, World, __version__, default_frame_every  # noqa: F401

__all__ = sorted(name for name in dir(_mabd) if not name.startswith("_")) + [
    "record_run", "write_viewer"]


def record_run(world: World, steps: int, path: str, frame_every: Optional[int] = None) -> Recorder:
    """Steps ``world`` ``steps`` times and writes its motion to the binary glTF file ``path``.

    A frame is recorded before the first step and every ``frame_every`` steps (default: about
    60 frames per simulated second, as ``mabd run``). Returns the recorder.
    """
    if steps < 0:
        raise ValueError(f"record_run: steps must be >= 0, got {steps}")
    every = default_frame_every(world.dt) if frame_every is None else int(frame_every)
    if every < 1:
        raise ValueError(f"record_run: frame_every must be >= 1, got {frame_every}")
    recorder = Recorder(world)
    recorder.record()
    done = 0
    while done < steps:
        n = min(every, steps - done)
        world.step(n)
        done += n
        recorder.record()
    recorder.write_glb(path)
    return recorder


def _program() -> str:
    """The mabd program: $MABD_PROGRAM, the one built or installed with this package, or PATH."""
    candidates = [os.environ.get("MABD_PROGRAM", "")]
    try:
        from ._paths import PROGRAM

        candidates.append(PROGRAM)
    except ImportError:
        pass
    candidates.append(shutil.which("mabd") or "")
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(
        "the mabd program was not found (build it with the package, put it on PATH or set "
        "MABD_PROGRAM)")


def write_viewer(glb: str, html: Optional[str] = None, stats: Optional[str] = None) -> str:
    """Writes the self-contained viewer page of ``mabd view`` for the glTF file ``glb``.

    ``html`` defaults to ``glb`` with the extension .html; ``stats`` is an optional stats file
    (``mabd run --stats``). Returns the page's path. Raises RuntimeError with the program's
    message if it fails (e.g. a build without the viewer bundle).
    """
    out = html if html is not None else os.path.splitext(glb)[0] + ".html"
    command = [_program(), "view", glb, "-o", out]
    if stats is not None:
        command += ["--stats", stats]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip() or f"mabd view exited with {result.returncode}")
    return out
