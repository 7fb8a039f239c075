"""mabd.WorldBatch: copies on threads match serial copies bit for bit; rollouts, resets and
per-world failures."""

import numpy as np
import pytest

import mabd


def driven_arm() -> mabd.World:
    """A 1 kg, 1 m arm hinged at one end about z (no gravity) with a position drive."""
    w = mabd.World(dt=1e-2, gravity=(0, 0, 0))
    w.add_body(mabd.BodyDef(name="arm", shape=mabd.ShapeDef.box((1, 0.05, 0.05)), mass=1,
                            position=(0.5, 0, 0)))
    drive = mabd.JointDrive(mode=mabd.DriveMode.Position, target=0.0, stiffness=50, damping=10)
    w.add_joint(mabd.JointDef(name="shoulder", type=mabd.JointType.Hinge, body_b=0,
                              axis=(0, 0, 1), drive=drive))
    return w


def serial(proto, targets, steps):
    out = []
    for t in targets:
        w = proto.clone()
        w.set_drive_target("shoulder", t)
        w.step(steps)
        out.append(w.q.copy())
    return np.stack(out)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_batch_matches_serial_copies_bitwise(threads):
    proto = driven_arm()
    targets = np.linspace(-0.5, 0.5, 6)
    batch = mabd.WorldBatch(proto, 6, threads=threads, seed=7)
    assert batch.size == 6 and batch.threads == threads
    assert list(batch.seeds) == list(range(7, 13))
    batch.set_drive_targets(["shoulder"], targets[:, None])
    batch.step(200)
    q = batch.q()
    assert q.shape == (6, 1, 12)
    np.testing.assert_array_equal(q, serial(proto, targets, 200))
    # The drive holds each arm near its own target after 2 s (stiffness 50, damping 10: its slow mode decays as exp(-6.4 t)).
    np.testing.assert_allclose(batch.joint_positions(["shoulder"])[:, 0], targets, atol=5e-3)
    assert not batch.failed.any()


def test_rollout_with_controls_matches_a_serial_loop():
    proto = driven_arm()
    batch = mabd.WorldBatch(proto, 4, threads=2)
    steps = 30
    targets = np.zeros((steps, 4, 1))
    targets[10:, :, 0] = np.arange(4) * 0.2  # world i's target jumps to 0.2 i at step 10
    start = proto.save_state()
    traj = batch.rollout(start, steps, ["shoulder"], targets)
    assert traj.shape == (steps, 4, 1, 12)
    for i in range(4):
        w = proto.clone()
        for s in range(steps):
            w.set_drive_target("shoulder", targets[s, i, 0])
            w.step()
            np.testing.assert_array_equal(traj[s, i], w.q)
    assert not np.array_equal(traj[-1, 1], traj[-1, 3])
    with pytest.raises(ValueError, match="targets must have shape"):
        batch.rollout(start, steps, ["shoulder"], targets[:, :2])
    with pytest.raises(ValueError, match="unknown joint 'elbow'"):
        batch.rollout(start, steps, ["elbow"], targets)


def test_a_failing_world_stops_alone_and_resets():
    proto = driven_arm()
    batch = mabd.WorldBatch(proto, 3, threads=2)
    # World 1's target makes a drive torque that no step can follow: it diverges alone.
    batch.set_drive_targets([0], np.array([[0.1], [1e300], [0.2]]))
    batch.step(5)
    assert list(batch.failed) == [False, True, False]
    assert "diverged" in batch.errors[1] and batch.errors[0] == ""
    batch.reset([1])
    assert not batch.failed.any()
    np.testing.assert_array_equal(batch.q()[1], proto.q)
