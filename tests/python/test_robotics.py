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


def test_urdf_effort_limits_cap_the_drives():
    w = panda()
    assert w.joint_effort_limit("panda_joint1") == 87
    assert w.joint_effort_limit("panda_joint7") == 12
    assert w.joint_effort_limit("panda_finger_joint_left") == 20
    w.set_drive("panda_joint2", mabd.JointDrive(mode=mabd.DriveMode.Position, target=1.0,
                                                stiffness=1e5))
    assert w.joint_drive("panda_joint2").max_force == 87
    # Joint 2 lifts the whole outstretched arm: 87 N m cannot hold it against gravity, so a
    # stiff drive towards the horizontal still lets it fall back.
    w.set_drive("panda_joint2", mabd.JointDrive(mode=mabd.DriveMode.Position,
                                                target=math.pi / 2, stiffness=1e6))
    w.step(200)
    assert w.joint_position("panda_joint2") < 1.0


def test_effort_drive_from_python():
    w = mabd.World(dt=1e-3, gravity=(0, 0, 0), time_integration=mabd.TimeIntegration.ImplicitEuler)
    w.add_body(mabd.BodyDef(name="wheel", shape=mabd.ShapeDef.cylinder(0.1, 0.05), mass=2.0))
    w.add_joint(mabd.JointDef(name="axle", type=mabd.JointType.Hinge, body_a=None, body_b=0,
                              axis=(0, 0, 1),
                              drive=mabd.JointDrive(mode=mabd.DriveMode.Effort, target=0.005)))
    w.step(1000)
    # omega = tau t / I about the axle (the z principal axis of the wheel's shape); implicit
    # Euler loses rotational energy at first order in omega h (0.6% at 10x this torque).
    inertia = w.body_info("wheel").principal_inertia[2]
    assert abs(inertia - 0.5 * 2.0 * 0.01) < 2e-4  # m r^2 / 2, for the tessellated cylinder
    assert w.joint_velocity("axle") == pytest.approx(0.005 * 1.0 / inertia, rel=1e-3)


def _pick_and_place():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "pick_and_place", scene("examples/pick_and_place.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", [0, 3])
def test_pick_and_place_stacks_three_cubes(seed):
    pp = _pick_and_place()
    ok, errors, arm = pp.run(seed)
    assert ok, errors
    assert arm.newton / arm.steps < 1.25  # one Newton iteration on most steps


def test_floating_base_urdf_falls_and_pickles():
    w = mabd.World.from_scene(scene("models/panda.urdf"), floating_base=True)
    base = w.find_body("panda_link0")
    assert w.body_info(base).kind == mabd.BodyKind.Dynamic
    z0 = w.com_position(base)[2]
    w.step(10)
    assert w.com_position(base)[2] < z0 - 1e-3  # nothing holds the base up
    w2 = pickle.loads(pickle.dumps(w))
    w.step(5)
    w2.step(5)
    np.testing.assert_array_equal(w.q, w2.q)
    fixed = mabd.World.from_scene(scene("models/panda.urdf"))
    assert fixed.body_info("panda_link0").kind == mabd.BodyKind.Static
    with pytest.raises(mabd.SceneError, match="floating_base: applies to URDF models only"):
        mabd.World.from_scene(scene("scenes/pendulum.json"), floating_base=True)
