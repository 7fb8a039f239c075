"""Motion checked against closed forms: free fall, the physical pendulum, joint wrenches,
drives, loads and kinematic bodies."""

import math

import numpy as np
import pytest

import mabd
from conftest import build_pendulum

G = 9.81


def free_ball(integration):
    w = mabd.World(dt=1e-3, gravity=(0, 0, -G), time_integration=integration)
    w.add_body(mabd.BodyDef(name="ball", shape=mabd.ShapeDef.sphere(0.1), position=(0, 0, 10),
                            linear_velocity=(1.0, 0, 2.0)))
    return w


def test_free_fall_generalized_alpha_matches_closed_form():
    w = free_ball(mabd.TimeIntegration.GeneralizedAlpha)
    q = w.q
    for _ in range(5):
        w.step(100)
        t = w.time
        # Constant acceleration is integrated exactly by the Newmark family.
        assert q[0, 11] == pytest.approx(10 + 2.0 * t - G * t * t / 2, abs=1e-9)
        assert q[0, 9] == pytest.approx(1.0 * t, abs=1e-12)
        assert w.linear_velocities()[0, 2] == pytest.approx(2.0 - G * t, abs=1e-9)


def test_free_fall_implicit_euler_matches_its_discrete_closed_form():
    # Implicit Euler: v_n = v0 - g h n, z_n = z0 + v0 h n - g h^2 n (n + 1) / 2.
    w = free_ball(mabd.TimeIntegration.ImplicitEuler)
    h = w.dt
    w.step(300)
    n = 300
    assert w.q[0, 11] == pytest.approx(10 + 2.0 * h * n - G * h * h * n * (n + 1) / 2, abs=1e-9)
    # ... which differs from the continuous one by g h t / 2 (m): the check can tell them apart.
    assert abs(w.q[0, 11] - (10 + 2.0 * n * h - G * (n * h) ** 2 / 2)) > 1e-3


def _elliptic_k(k):
    """Complete elliptic integral of the first kind, by the arithmetic-geometric mean."""
    a, b = 1.0, math.sqrt(1 - k * k)
    while abs(a - b) > 1e-15:
        a, b = (a + b) / 2, math.sqrt(a * b)
    return math.pi / (2 * a)


def test_pendulum_energy_does_not_grow_and_half_period_matches():
    w = build_pendulum()
    e0 = w.kinetic_energy() + w.potential_energy()
    energies, rates, times = [], [], []
    for _ in range(1200):
        w.step()
        energies.append(w.kinetic_energy() + w.potential_energy())
        rates.append(w.joint_velocity("pivot"))
        times.append(w.time)
    energies = np.array(energies)
    # Undamped: no growth (1 uJ of round-off on a 4.9 J swing) and no visible decay.
    assert energies.max() <= e0 + 1e-6
    assert energies.min() >= e0 - 1e-3 * abs(w.body_info(0).mass * G * 0.5)
    # Half period of a rod (I = m L^2 / 3 about the end) released horizontal: the angular
    # velocity returns to zero after T/2 = (2 / omega0) K(sin 45 deg).
    omega0 = math.sqrt(1.5 * G)  # m g (L/2) / (m L^2 / 3), L = 1 m
    half_period = 2 / omega0 * _elliptic_k(math.sin(math.pi / 4))
    rates = np.array(rates)
    i = next(k for k in range(200, len(rates)) if rates[k - 1] * rates[k] <= 0)
    assert times[i] == pytest.approx(half_period, abs=2.5e-3)


def test_hanging_rod_joint_wrench_carries_its_weight():
    # A steel rod: its axial vibration (released unstretched) is far above 1 / dt, and the
    # integrator's high-frequency damping removes it within the 0.5 s simulated here (a soft
    # rod would keep ringing at its resolved axial frequency).
    w = mabd.World(dt=1e-3, gravity=(0, 0, -G))
    w.add_body(mabd.BodyDef(name="rod", shape=mabd.ShapeDef.box((0.02, 0.02, 1.0)), mass=2.0,
                            position=(0, 0, -0.5), material=mabd.Material(youngs_modulus=2e11)))
    w.add_joint(mabd.JointDef(name="pin", type=mabd.JointType.Ball, body_b=0))
    w.step(500)
    force, torque = w.joint_wrenches()
    np.testing.assert_allclose(force[0], [0, 0, 2.0 * G], atol=1e-6 * G)
    np.testing.assert_allclose(torque[0], [0, 0, 0], atol=1e-6)
    single = w.joint_wrench("pin")
    np.testing.assert_array_equal(single.force, force[0])


def test_position_drive_reaches_target_and_follows_new_target():
    w = mabd.World(dt=1e-3, gravity=(0, 0, 0))
    w.add_body(mabd.BodyDef(name="arm", shape=mabd.ShapeDef.box((1, 0.05, 0.05)), mass=1,
                            position=(0.5, 0, 0)))
    drive = mabd.JointDrive(mode=mabd.DriveMode.Position, target=0.3, stiffness=50, damping=10)
    w.add_joint(mabd.JointDef(name="shoulder", type=mabd.JointType.Hinge, body_b=0,
                              axis=(0, 0, 1), drive=drive))
    w.step(3000)
    assert w.joint_position("shoulder") == pytest.approx(0.3, abs=1e-4)
    states = w.joint_states()
    assert states["dofs"][0] == 1
    assert states["position"][0, 0] == pytest.approx(w.joint_position(0), abs=1e-12)
    w.set_drive_target("shoulder", -0.2)
    assert w.joint_drive(0).target == -0.2
    w.step(3000)
    assert w.joint_position("shoulder") == pytest.approx(-0.2, abs=1e-4)
    w.set_drive("shoulder", None)
    assert w.joint_drive(0) is None


def test_hinge_spring_energy_is_counted_and_the_total_never_rises():
    # A rod on a sprung hinge, released 0.4 rad from the spring's rest, weightless: it stores
    # 1/2 k 0.4^2 at the start, and under implicit Euler (which damps) the total of kinetic,
    # potential and joint energy falls at every step; without the spring's share it would
    # rise as the spring gives its energy back as motion.
    w = mabd.World(dt=1e-3, gravity=(0, 0, 0), time_integration=mabd.TimeIntegration.ImplicitEuler)
    w.add_body(mabd.BodyDef(name="arm", shape=mabd.ShapeDef.box((1, 0.05, 0.05)), mass=1,
                            position=(0.5, 0, 0)))
    spring = mabd.JointSpring(stiffness=5.0, damping=0.0, rest=0.4)
    w.add_joint(mabd.JointDef(name="shoulder", type=mabd.JointType.Hinge, body_b=0,
                              axis=(0, 0, 1), spring=spring))
    assert w.joint_energy() == pytest.approx(0.5 * 5.0 * 0.4 ** 2, rel=1e-12)
    e = w.kinetic_energy() + w.potential_energy()
    assert e == pytest.approx(w.joint_energy(), rel=1e-12)
    swing = 0.0
    for _ in range(1000):
        w.step()
        e_next = w.kinetic_energy() + w.potential_energy()
        assert e_next <= e
        e = e_next
        swing = max(swing, w.joint_position("shoulder"))
    assert swing > 0.7  # it swung through the rest angle to nearly 0.8 rad


def test_penalty_spring_energy_is_counted():
    # A ball resting on penalty springs without a damper: its normal row runs through the
    # centre, so the spring's stiffness is k = m / tau^2 exactly, and it holds 1/2 k d^2 at the
    # reported depth d; the total with it never rises (implicit Euler).
    tau = 0.01
    s = mabd.WorldSettings(dt=1e-3, time_integration=mabd.TimeIntegration.ImplicitEuler)
    s.contact.model = mabd.ContactModel.Penalty
    s.contact.time_constant = tau
    s.contact.damping_ratio = 0.0
    w = mabd.World(s)
    w.add_body(mabd.BodyDef(name="ground", kind=mabd.BodyKind.Static, shape=mabd.ShapeDef.plane()))
    w.add_body(mabd.BodyDef(name="ball", shape=mabd.ShapeDef.sphere(0.1), mass=2.0,
                            position=(0, 0, 0.1)))
    w.step()
    e = w.kinetic_energy() + w.potential_energy()
    for _ in range(1000):
        w.step()
        depth = w.contacts()["depth"]
        assert len(depth) == 1
        assert w.contact_energy() == pytest.approx(0.5 * 2.0 / tau ** 2 * depth[0] ** 2, rel=1e-9)
        e_next = w.kinetic_energy() + w.potential_energy()
        assert e_next <= e + 1e-12
        e = e_next
    # Settled at the depth d = m g / k = g tau^2, where the spring holds m g d / 2.
    assert w.contact_energy() == pytest.approx(0.5 * 2.0 * G * G * tau ** 2, rel=0.05)


def test_external_force_changes_momentum_by_its_impulse():
    w = mabd.World(dt=1e-3, gravity=(0, 0, 0), time_integration=mabd.TimeIntegration.ImplicitEuler)
    w.add_body(mabd.BodyDef(name="puck", shape=mabd.ShapeDef.box((0.1, 0.1, 0.1)), mass=2.0))
    for _ in range(100):
        w.apply_wrench("puck", force=(4.0, 0, 0))
        w.step()
    # 4 N for 0.1 s on 2 kg: 0.4 kg m/s, 0.2 m/s.
    np.testing.assert_allclose(w.linear_momentum(), [0.4, 0, 0], atol=1e-12)
    np.testing.assert_allclose(w.linear_velocities()[0], [0.2, 0, 0], atol=1e-12)
    w.step(10)  # the load lasted one step each time: the velocity stays
    np.testing.assert_allclose(w.linear_velocities()[0], [0.2, 0, 0], atol=1e-12)


def test_kinematic_target_and_motion_function():
    w = mabd.World(dt=1e-2)
    target = w.add_body(mabd.BodyDef(name="lift", kind=mabd.BodyKind.Kinematic,
                                     shape=mabd.ShapeDef.box((1, 1, 0.1))))
    quarter = (math.cos(math.pi / 8), 0, 0, math.sin(math.pi / 8))  # 45 deg about z
    w.set_kinematic_target(target, position=(0, 0, 0.25), orientation=quarter)
    spinner = w.add_body(mabd.BodyDef(
        name="spinner", kind=mabd.BodyKind.Kinematic, shape=mabd.ShapeDef.box((1, 0.1, 0.1)),
        motion=lambda t: mabd.Pose(position=(0, t, 0))))
    w.step()
    pose = w.pose(target)
    np.testing.assert_allclose(pose.position, [0, 0, 0.25], atol=1e-12)
    np.testing.assert_allclose(pose.orientation, quarter, atol=1e-12)
    w.step(9)
    np.testing.assert_allclose(w.pose(spinner).position, [0, 0.1, 0], atol=1e-12)


def test_box_resting_on_ground_contact_forces_carry_its_weight():
    s = mabd.WorldSettings(dt=1e-3, time_integration=mabd.TimeIntegration.ImplicitEuler)
    s.contact.model = mabd.ContactModel.Exact
    w = mabd.World(s)
    w.add_body(mabd.BodyDef(name="ground", kind=mabd.BodyKind.Static, shape=mabd.ShapeDef.plane()))
    w.add_body(mabd.BodyDef(name="crate", shape=mabd.ShapeDef.box((0.4, 0.4, 0.4)), mass=3.0,
                            position=(0, 0, 0.2)))
    w.step(200)
    c = w.contacts()
    assert len(c["body"]) >= 3 and set(c["body"]) == {1} and set(c["collider"]) == {0}
    np.testing.assert_allclose(c["normal"], np.tile([0, 0, 1.0], (len(c["body"]), 1)), atol=1e-9)
    # At rest the contact forces carry the weight (to 1e-3 of it, friction included).
    weight = np.array([0, 0, 3.0 * G])
    assert np.linalg.norm(c["force"].sum(axis=0) - weight) < 1e-3 * weight[2]
    assert w.last_step.contacts == len(c["body"])
