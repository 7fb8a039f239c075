"""scenes/tools/box_overlap.py: the boxes' true overlap against closed forms."""

import importlib.util
import math

import numpy as np

from conftest import SOURCE_DIR

_spec = importlib.util.spec_from_file_location(
    "box_overlap", SOURCE_DIR / "scenes" / "tools" / "box_overlap.py")
box_overlap = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(box_overlap)

HALF = np.array([[0.1, 0.1, 0.1], [0.1, 0.1, 0.1]])  # two 0.2 m cubes


def overlap(b_position, b_quat, excluded=frozenset()):
    """Overlap (m) and pair of a cube at the origin and one at `b_position` turned by `b_quat`."""
    pos = np.array([[0.0, 0.0, 0.0], b_position], dtype=float)
    quats = np.array([[1.0, 0, 0, 0], b_quat], dtype=float)
    return box_overlap.deepest_pair(pos, box_overlap.rotations(quats), HALF, set(excluded))


def test_rotations_match_axis_angle():
    angle = 0.7
    q = np.array([[math.cos(angle / 2), 0, 0, math.sin(angle / 2)]])  # about z
    expected = np.array([[math.cos(angle), -math.sin(angle), 0],
                         [math.sin(angle), math.cos(angle), 0], [0, 0, 1]])
    np.testing.assert_allclose(box_overlap.rotations(q)[0], expected, atol=1e-15)


def test_stacked_cubes_overlap_by_their_shared_depth_or_gap():
    depth, pair = overlap((0.03, -0.02, 0.19), (1, 0, 0, 0))
    assert pair == (0, 1)
    assert math.isclose(depth, 0.01, abs_tol=1e-12)
    apart, _ = overlap((0.0, 0.0, 0.25), (1, 0, 0, 0))
    assert math.isclose(apart, -0.05, abs_tol=1e-12)


def test_turned_cube_overlaps_along_the_face_normal():
    # Turned 45 degrees about z, sunk 1 cm into the lower cube's top face.
    s = math.sin(math.pi / 8)
    depth, _ = overlap((0.0, 0.0, 0.19), (math.cos(math.pi / 8), 0, 0, s))
    assert math.isclose(depth, 0.01, abs_tol=1e-12)


def test_edge_on_cube_overlaps_along_the_edge_direction():
    # Turned 45 degrees about y, its lower edge 1 cm below the top face: the least overlap is
    # along z, 1 cm (its diagonal half-height is 0.1 sqrt 2).
    s = math.sin(math.pi / 8)
    z = 0.1 + 0.1 * math.sqrt(2) - 0.01
    depth, _ = overlap((0.0, 0.0, z), (math.cos(math.pi / 8), 0, s, 0))
    assert math.isclose(depth, 0.01, abs_tol=1e-12)


def test_jointed_pairs_are_left_out():
    depth, pair = overlap((0.0, 0.0, 0.19), (1, 0, 0, 0), excluded={(0, 1)})
    assert depth == -math.inf and pair is None
