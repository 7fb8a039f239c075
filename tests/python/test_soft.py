"""Soft bodies from Python: a scene's soft body steps with its attachments, its state and
energies read as numpy arrays, and a pickled world carries it."""

import json
import pickle

import numpy as np

import mabd

SCENE = {
    "settings": {"dt": 0.01, "time_integration": "implicit_euler"},
    "bodies": [{"name": "plate", "shape": {"type": "box", "size": [0.2, 0.2, 0.05]},
                "material": {"density": 1000, "youngs_modulus": 1e9},
                "position": [0, 0, 0.375]}],
    "joints": [{"name": "pivot", "type": "ball", "bodies": ["world", "plate"],
                "anchor": [0.1, 0, 0.4]}],
    "soft_bodies": [{"name": "blob", "box": {"size": [0.2, 0.2, 0.2], "cells": [2, 2, 2]},
                     "position": [0, 0, 0.25],
                     "material": {"density": 1000, "youngs_modulus": 1e5, "poisson_ratio": 0.3},
                     "attach": [{"body": "plate",
                                 "region": {"min": [-1, -1, 0.349], "max": [1, 1, 0.351]}}]}],
}


def test_soft_body_steps_and_pickles():
    w = mabd.World.from_json(json.dumps(SCENE), "soft.json")
    assert w.soft_body_count == 1
    x0, v0 = w.soft_body_state(0)
    assert x0.shape == (27, 3) and v0.shape == (27, 3)
    assert np.all(v0 == 0)
    w.step(20)
    x, v = w.soft_body_state(0)
    assert x[:, 2].min() < x0[:, 2].min() - 0.01  # it swings down about the off-centre pivot
    assert w.last_step.attachment_residual < 1e-9
    assert w.last_step.soft_ms > 0
    kinetic, elastic, potential = w.soft_body_energies(0)
    assert kinetic > 0 and elastic > 0 and potential > elastic  # above the origin
    # Energy totals include the soft body (no gain: implicit Euler only dissipates).
    e = w.kinetic_energy() + w.potential_energy()
    copy = pickle.loads(pickle.dumps(w))
    np.testing.assert_array_equal(copy.soft_body_state(0)[0], x)
    w.step(5)
    copy.step(5)
    np.testing.assert_array_equal(copy.soft_body_state(0)[0], w.soft_body_state(0)[0])
    assert w.kinetic_energy() + w.potential_energy() <= e + 1e-9
