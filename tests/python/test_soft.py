"""Soft bodies from Python: a scene's soft body steps with its attachments, its state and
energies read as numpy arrays, and a pickled world carries it; soft bodies added from Python
step as the scene's do, hang from bodies, reject bad input by name and pickle."""

import json
import pickle

import numpy as np
import pytest

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


# ---- soft bodies added from Python ------------------------------------------------------------

def box_mesh(lo, hi, cells):
    """Nodes (m) and tets of the box [lo, hi] of cells = (nx, ny, nz), each cell cut into six
    tets along its 0-7 diagonal: the layout of a scene's generated "box" soft body, written
    here independently (x fastest, then y, then z)."""
    nx, ny, nz = cells
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    nodes = [lo + np.array([i / nx, j / ny, k / nz]) * (hi - lo)
             for k in range(nz + 1) for j in range(ny + 1) for i in range(nx + 1)]

    def node(i, j, k, c):
        return (i + (c & 1)) + (nx + 1) * ((j + ((c >> 1) & 1)) + (ny + 1) * (k + ((c >> 2) & 1)))

    paths = [(1, 2, 4), (1, 4, 2), (2, 1, 4), (2, 4, 1), (4, 1, 2), (4, 2, 1)]
    tets = [[node(i, j, k, c) for c in (0, p[0], p[0] + p[1], 7)]
            for k in range(nz) for j in range(ny) for i in range(nx) for p in paths]
    return np.array(nodes), np.array(tets)


GROUND_SCENE = {
    "settings": {"dt": 0.01, "time_integration": "implicit_euler",
                 "contact": {"model": "exact", "friction": True}},
    "bodies": [{"name": "ground", "kind": "static", "shape": {"type": "plane"},
                "material": {"density": 1000, "friction": 0.8}}],
}
BOX_MATERIAL = {"density": 800, "youngs_modulus": 5e4, "poisson_ratio": 0.3, "friction": 0.6}


def python_box(name="cube"):
    """The scene box below, as a SoftBodyDef: 0.2 m cube of 2 x 2 x 2 cells, centred 0.12 m
    above the ground, moving at (0.3, 0, -0.2) m/s."""
    nodes, tets = box_mesh([-0.1, -0.1, -0.1], [0.1, 0.1, 0.1], (2, 2, 2))
    return mabd.SoftBodyDef(name=name, nodes=nodes + [0, 0, 0.12], tets=tets,
                            material=mabd.Material(**BOX_MATERIAL),
                            linear_velocity=(0.3, 0, -0.2))


def test_python_box_steps_as_the_scene_box():
    scene = dict(GROUND_SCENE, soft_bodies=[{
        "name": "cube", "box": {"size": [0.2, 0.2, 0.2], "cells": [2, 2, 2]},
        "position": [0, 0, 0.12], "material": BOX_MATERIAL, "linear_velocity": [0.3, 0, -0.2]}])
    from_scene = mabd.World.from_json(json.dumps(scene), "box.json")
    built = mabd.World.from_json(json.dumps(GROUND_SCENE), "ground.json")
    assert built.add_soft_body(python_box()) == 0
    assert built.find_soft_body("cube") == 0 and built.find_soft_body("other") is None
    assert built.soft_body_name(0) == "cube"
    np.testing.assert_array_equal(built.soft_body_tets("cube"), from_scene.soft_body_tets(0))
    np.testing.assert_allclose(built.soft_body_state(0)[0], from_scene.soft_body_state(0)[0],
                               rtol=0, atol=1e-15)
    for _ in range(4):  # it lands (0.02 m gap) and bounces on the ground
        built.step(10)
        from_scene.step(10)
        for a, b in zip(built.soft_body_state(0), from_scene.soft_body_state(0)):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    x, _ = built.soft_body_state(0)
    assert x[:, 2].min() > -1e-4 and x[:, 0].mean() > 0.01  # on the ground, moved along x
    # A scene plus a Python addition pickles both.
    copy = pickle.loads(pickle.dumps(built))
    built.step(10)
    copy.step(10)
    np.testing.assert_array_equal(copy.soft_body_state(0)[0], built.soft_body_state(0)[0])


def test_soft_contacts_are_listed_with_their_nodes():
    """A cube set on the ground: contacts() lists its sole's nodes (soft_body 0, body -1,
    point = the node), pushing up with the cube's weight between them once it rests."""
    scene = dict(GROUND_SCENE, soft_bodies=[{
        "name": "cube", "box": {"size": [0.2, 0.2, 0.2], "cells": [2, 2, 2]},
        "position": [0, 0, 0.1], "material": BOX_MATERIAL}])
    w = mabd.World.from_json(json.dumps(scene), "rest.json")
    w.step(200)
    c = w.contacts()
    x, _ = w.soft_body_state(0)
    sole = set(np.flatnonzero(np.abs(x[:, 2]) < 1e-3))
    assert len(c["node"]) == 9 and set(c["node"]) == sole
    assert np.all(c["soft_body"] == 0) and np.all(c["body"] == -1) and np.all(c["collider"] == 0)
    np.testing.assert_allclose(c["point"], x[c["node"]], rtol=0, atol=1e-15)
    weight = 800 * 0.2 ** 3 * 9.81
    assert abs(c["force"][:, 2].sum() - weight) < 1e-3 * weight


def hanging_world():
    """A 0.5 kg plate held by a fixed joint to the world, and a 0.2 m soft cube (1000 kg/m^3,
    E = 1e5 Pa) hanging from its top face glued to the plate's underside."""
    w = mabd.World(dt=0.01, time_integration=mabd.TimeIntegration.ImplicitEuler,
                   newton_iterations=50, tolerance=1e-11)
    plate = w.add_body(mabd.BodyDef(name="plate", shape=mabd.ShapeDef.box((0.2, 0.2, 0.05)),
                                    mass=0.5, material=mabd.Material(youngs_modulus=1e9),
                                    position=(0.1, 0.1, 0.375)))
    joint = w.add_joint(mabd.JointDef(type=mabd.JointType.Fixed, body_a=None, body_b=plate,
                                      anchor=(0.1, 0.1, 0.4)))
    nodes, tets = box_mesh([0, 0, 0.15], [0.2, 0.2, 0.35], (2, 2, 2))
    top = [(i, plate) for i in np.flatnonzero(np.abs(nodes[:, 2] - 0.35) < 1e-12)]
    soft = w.add_soft_body(mabd.SoftBodyDef(
        name="blob", nodes=nodes, tets=tets, attachments=top,
        material=mabd.Material(density=1000, youngs_modulus=1e5, poisson_ratio=0.3)))
    return w, joint, soft


def test_attached_soft_body_hangs_from_the_plate():
    w, joint, soft = hanging_world()
    x0, _ = w.soft_body_state(soft)
    t0 = w.coordinates("plate")[9:]
    w.step(300)
    x, v = w.soft_body_state(soft)
    top = np.abs(x0[:, 2] - 0.35) < 1e-12
    # The glued face moves with the plate's points x = A p + t (the plate, an elastic affine
    # body held by the fixed joint, hardly moves) ...
    a, t = w.affine_matrix("plate"), w.coordinates("plate")[9:]
    np.testing.assert_allclose(x[top], (x0[top] - t0) @ a.T + t, rtol=0, atol=1e-10)
    np.testing.assert_allclose(x[top], x0[top], rtol=0, atol=1e-6)
    assert w.last_step.attachment_residual < 1e-10
    # ... the rest sags under gravity and is at rest ...
    assert x[~top, 2].max() < 0.35 and (x0[:, 2] - x[:, 2])[~top].min() > 0
    assert np.abs(v).max() < 1e-3
    # ... and the joint carries both weights: (0.5 kg + 1000 kg/m^3 * 0.008 m^3) * g.
    weight = (0.5 + 1000 * 0.2 ** 3) * 9.81
    force = w.joint_wrench(joint).force
    assert abs(abs(force[2]) - weight) < 1e-4 * weight
    assert abs(force[0]) < 1e-6 * weight and abs(force[1]) < 1e-6 * weight


def raises_naming(what, make):
    with pytest.raises(mabd.InvalidArgument, match=what):
        make()


def test_bad_soft_body_input_is_named():
    w = mabd.World(dt=0.01)
    plate = w.add_body(mabd.BodyDef(name="plate", shape=mabd.ShapeDef.box((0.2, 0.2, 0.05))))
    nodes, tets = box_mesh([0, 0, 0.1], [0.1, 0.1, 0.2], (1, 1, 1))
    d = mabd.SoftBodyDef(name="blob", nodes=nodes, tets=tets)
    raises_naming(r"SoftBodyDef.nodes: expected an \(n, 3\) array, got shape \(8, 2\)",
                  lambda: setattr(d, "nodes", nodes[:, :2]))
    raises_naming(r"SoftBodyDef.nodes: .*got shape \(24,\)",
                  lambda: mabd.SoftBodyDef(nodes=nodes.ravel()))
    raises_naming(r"SoftBodyDef.tets: expected an \(n, 4\) array, got shape \(6, 3\)",
                  lambda: setattr(d, "tets", tets[:, :3]))
    raises_naming(r"SoftBodyDef.tets\[2\]: node index -1 out of range",
                  lambda: setattr(d, "tets", np.where(np.arange(24).reshape(6, 4) == 9, -1, tets)))
    raises_naming(r"SoftBodyDef.attachments\[1\]: expected a pair",
                  lambda: setattr(d, "attachments", [(0, None), 3]))
    raises_naming(r"SoftBodyDef.attachments\[0\]: body must be a body id",
                  lambda: setattr(d, "attachments", [(0, "plate")]))
    assert w.soft_body_count == 0  # nothing above reached the world

    def add(**change):
        bad = mabd.SoftBodyDef(name="blob", nodes=nodes, tets=tets)
        for k, v in change.items():
            setattr(bad, k, v)
        return lambda: w.add_soft_body(bad)

    far = tets.copy()
    far[3, 1] = 8
    raises_naming(r"soft body 'blob'.*tet 3.*node index 8 out of range \[0, 8\)",
                  add(tets=far))
    nan = nodes.copy()
    nan[5, 2] = np.nan
    raises_naming(r"soft body 'blob'.*node 5: non-finite position", add(nodes=nan))
    raises_naming(r"soft body 'blob': attachment 0: node 8 out of range",
                  add(attachments=[(8, plate)]))
    raises_naming(r"soft body 'blob': attachment 0: unknown body id 7",
                  add(attachments=[(0, 7)]))
    raises_naming(r"soft body 'blob': no tets", add(tets=np.zeros((0, 4), int)))
    raises_naming(r"soft body 'blob': Poisson ratio",
                  add(material=mabd.Material(poisson_ratio=0.5)))
    assert w.soft_body_count == 0
    assert w.add_soft_body(mabd.SoftBodyDef(name="blob", nodes=nodes, tets=tets)) == 0
    raises_naming(r"soft body 'blob'.*name is taken", add())
    raises_naming(r"unknown soft body id 1 \(world has 1 soft bodies\)",
                  lambda: w.soft_body_state(1))
    raises_naming(r"no soft body named 'nope'", lambda: w.soft_body_tets("nope"))


def test_python_soft_body_pickles_and_clones():
    w, joint, soft = hanging_world()
    w.step(20)
    for copy in (pickle.loads(pickle.dumps(w)), w.clone()):
        assert copy.soft_body_count == 1 and copy.soft_body_name(0) == "blob"
        np.testing.assert_array_equal(copy.soft_body_tets(0), w.soft_body_tets(0))
        np.testing.assert_array_equal(copy.soft_body_state(0)[0], w.soft_body_state(0)[0])
    copy = pickle.loads(pickle.dumps(w))
    w.step(15)
    copy.step(15)
    for a, b in zip(w.soft_body_state(0), copy.soft_body_state(0)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(w.q, copy.q)
    # The definition itself round-trips.
    d = python_box()
    d.attachments = [(0, None), (3, 2)]
    back = pickle.loads(pickle.dumps(d))
    np.testing.assert_array_equal(back.nodes, d.nodes)
    np.testing.assert_array_equal(back.tets, d.tets)
    assert back.attachments == [(0, None), (3, 2)] and back.name == "cube"
    assert back.material.youngs_modulus == 5e4
    np.testing.assert_array_equal(back.linear_velocity, [0.3, 0, -0.2])


def test_soft_body_attached_after_stepping_refuses_to_pickle():
    w, _, _ = hanging_world()
    w.step(2)
    nodes, tets = box_mesh([0, 0, 0.5], [0.1, 0.1, 0.6], (1, 1, 1))
    w.add_soft_body(mabd.SoftBodyDef(nodes=nodes, tets=tets, attachments=[(0, None)]))
    pickle.dumps(w)  # pinned to the world: replaying it places it the same
    w.add_soft_body(mabd.SoftBodyDef(nodes=nodes + [0, 0, 0.2], tets=tets,
                                     attachments=[(0, 0)]))
    with pytest.raises(TypeError, match=r"soft body 2 \(attached to a body\) was added after"):
        pickle.dumps(w)
