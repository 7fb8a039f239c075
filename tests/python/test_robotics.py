"""Robot models from Python: the Panda URDF, inverse kinematics, driving to the solution."""

import math
import pickle

import numpy as np
import pytest

import mabd
from conftest import scene

READY = [0, -math.pi / 4, 0, -3 * math.pi / 4, 0, math.pi / 2, math.pi / 4]
FLANGE = (0, 0, 0.107)


def panda():
    return mabd.World.from_scene(scene("models/panda.urdf"))


def test_panda_chain_and_forward_kinematics():
    w = panda()
    chain = mabd.arm_chain(w, "panda_link7")
    assert [w.joint_name(j) for j in chain] == [f"panda_joint{i}" for i in range(1, 8)]
    p, q = mabd.chain_pose(w, chain, "panda_link7", [0.0] * 7, tool_position=FLANGE)
    np.testing.assert_allclose(p, [0.088, 0, 0.926], atol=1e-12)
    # Pointing down: the flange's z axis is -z.
    wq, xq, yq, zq = q
    z_axis = np.array([2 * (xq * zq + wq * yq), 2 * (yq * zq - wq * xq), 1 - 2 * (xq * xq + yq * yq)])
    np.testing.assert_allclose(z_axis, [0, 0, -1], atol=1e-12)


def test_ik_then_drives_bring_the_flange_to_the_target():
    w = panda()
    chain = mabd.arm_chain(w, "panda_link7")
    p0, q0 = mabd.chain_pose(w, chain, "panda_link7", READY, tool_position=FLANGE)
    target = p0 + np.array([0.05, -0.1, -0.15])
    r = mabd.solve_ik(w, chain, "panda_link7", target, q0, tool_position=FLANGE, start=READY)
    assert r["converged"] and r["position_error"] < 1e-6
    p, q = mabd.chain_pose(w, chain, "panda_link7", list(r["positions"]), tool_position=FLANGE)
    np.testing.assert_allclose(p, target, atol=1e-6)
    # Drive there with stiff position drives (gravity on: the gains hold the arm up).
    for j, angle in zip(chain, r["positions"]):
        w.set_drive(j, mabd.JointDrive(mode=mabd.DriveMode.Position, target=float(angle),
                                       stiffness=5000, damping=300))
    w.step(3000)
    # Gravity sags the stiffest-loaded joint by about (45 N m) / (5000 N m/rad) = 0.009 rad.
    got = [w.joint_position(j) for j in chain]
    np.testing.assert_allclose(got, r["positions"], atol=2e-2)


def test_model_worlds_pickle_and_continue_bitwise():
    w = panda()
    w.step(20)
    w2 = pickle.loads(pickle.dumps(w))
    w.step(30)
    w2.step(30)
    np.testing.assert_array_equal(w.q, w2.q)


def test_cartesian_line_ends():
    p, q = mabd.cartesian_line((0, 0, 0), (1, 0, 0, 0), (1, 2, 3), (0, 0, 0, 1), 4)
    assert p.shape == (5, 3) and q.shape == (5, 4)
    np.testing.assert_allclose(p[2], [0.5, 1, 1.5])
    np.testing.assert_allclose(np.abs(q[-1]), [0, 0, 0, 1], atol=1e-15)
    with pytest.raises(ValueError):
        mabd.cartesian_line((0, 0, 0), (1, 0, 0, 0), (1, 2, 3), (0, 0, 0, 1), 0)


def test_joint_defined_by_frames_from_python():
    # A rod hinged to the world about y, its joint frame at the rod's end; the hinge axis is
    # the frames' z, turned onto y by a rotation of -90 deg about x.
    import math as m
    c, s = m.cos(-m.pi / 4), m.sin(-m.pi / 4)
    w = mabd.World(dt=1e-3, gravity=(0, 0, -9.81))
    w.add_body(mabd.BodyDef(name="rod", shape=mabd.ShapeDef.box((1, 0.02, 0.02)), mass=1,
                            position=(0.5, 0, 0)))
    j = mabd.JointDef(name="pin", type=mabd.JointType.Hinge, body_a=None, body_b=0,
                      frames=(((0, 0, 0), (c, s, 0, 0)), ((-0.5, 0, 0), (c, s, 0, 0))))
    assert j.frames is not None
    assert pickle.loads(pickle.dumps(j)).frames[1][0][0] == -0.5
    w.add_joint(j)
    w.step(200)
    # It swings down about y: its centre stays 0.5 m from the pivot, in the xz plane.
    p = w.positions()[0]
    assert abs(p[1]) < 1e-6 and abs(np.hypot(p[0], p[2]) - 0.5) < 1e-3 and p[2] < -0.05
    assert w.joint_position("pin") != 0
