"""Shared fixtures of the Python tests: the source tree and small worlds built from Python."""

import os
import pathlib

import pytest

import mabd

SOURCE_DIR = pathlib.Path(os.environ.get("MABD_SOURCE_DIR", pathlib.Path(__file__).parents[2]))


def scene(name: str) -> str:
    """Path of a scene file of the source tree (scenes/ or tests/data/)."""
    return str(SOURCE_DIR / name)


def pendulum_defs():
    """The body and joint of scenes/pendulum.json as Python definitions: a 1 m, 1 kg steel rod
    (box 1 x 0.02 x 0.02 m) hinged to the world at one end about y, released horizontal."""
    rod = mabd.BodyDef(
        name="rod",
        shape=mabd.ShapeDef.box((1.0, 0.02, 0.02)),
        material=mabd.Material(density=7850, youngs_modulus=2e11, poisson_ratio=0.3),
        mass=1.0,
        position=(0.5, 0, 0),
    )
    pivot = mabd.JointDef(name="pivot", type=mabd.JointType.Hinge, body_a=None, body_b=0,
                          anchor=(0, 0, 0), axis=(0, 1, 0))
    return rod, pivot


def build_pendulum(**settings) -> mabd.World:
    world = mabd.World(dt=1e-3, gravity=(0, 0, -9.81), **settings)
    rod, pivot = pendulum_defs()
    world.add_body(rod)
    world.add_joint(pivot)
    return world


@pytest.fixture
def pendulum() -> mabd.World:
    return build_pendulum()
