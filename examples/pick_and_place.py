#!/usr/bin/env python3
"""Pick and place: a Franka-Panda-like arm (models/panda.urdf) picks three 5 cm cubes from the
ground and stacks them, at h = 0.01 s with one Newton iteration per step and exact contact
(the scene scenes/pick_and_place.json). The arm is position-driven joint by joint: each
Cartesian waypoint of the gripper goes through damped-least-squares IK (mabd.solve_ik), the
joints' PD drives (torques clamped to the URDF effort limits) follow the targets, and the
fingers squeeze with their 20 N effort limit. Nothing else holds a cube: it is lifted by the
fingers' friction alone.

    export PYTHONPATH=build/python      # the package built by `make build` (or installed)
    /usr/bin/python3 examples/pick_and_place.py                 # seed 0, writes a viewer page
                                                                # (out/pick_and_place.html)
    /usr/bin/python3 examples/pick_and_place.py --seeds 10      # success rate over 10 seeds

Each seed moves and turns the cubes at random (up to 2 cm and 20 degrees). Success: the three
cubes stand one on another at the stack place, each within 1 cm of the stack's axis, 5 mm of
its height and 5 degrees of upright, after the arm has let go and backed off. Prints success, ms per step and the
Newton iterations; exits 1 if a seed fails.
"""

import argparse
import json
import math
import os
import pathlib
import sys
import time

import numpy as np

import mabd

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCENE = ROOT / "scenes" / "pick_and_place.json"
CUBES = ["cube_red", "cube_green", "cube_blue"]
SIDE = 0.05  # m, cube edge
STACK_XY = np.array([0.45, 0.0])  # m, where the stack is built
READY = [0.0, -math.pi / 4, 0.0, -3 * math.pi / 4, 0.0, math.pi / 2, math.pi / 4]
# Gripper centre between the finger pads, in panda_link7's frame: the hand frame (0.107 m
# along z, turned -45 degrees about z), 0.095 m further, where a cube's centre sits when the
# cube's top is 5 mm below the hand's palm.
TOOL_POSITION = (0.0, 0.0, 0.107 + 0.095)
TOOL_ORIENTATION = (math.cos(-math.pi / 8), 0.0, 0.0, math.sin(-math.pi / 8))
FINGERS = ["panda_finger_joint_left", "panda_finger_joint_right"]
# Finger targets (m). Closing on a cube (each finger then stopped at 0.025 m) the drive
# saturates at the fingers' 20 N effort limit: the grip force.
OPEN, CLOSED = 0.04, 0.0
ARM_GAINS = (4.0e4, 2.0e3)  # N m/rad, N m s/rad (torques clamped to the effort limits)
FINGER_GAINS = (2.0e3, 40.0)  # N/m, N s/m
FINGER_SPEED = 0.1  # m/s, the gripper's closing speed (the Franka hand's: 0.1 m/s per finger)


def quat_mul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def down(yaw):
    """Gripper orientation pointing down (tool z = -world z), turned by yaw about world z."""
    return quat_mul((math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)), (0.0, 1.0, 0.0, 0.0))


def yaw_of(q):
    """Yaw (rad) of a cube's orientation, folded to (-pi/4, pi/4] by its 4-fold symmetry."""
    w, x, y, z = q
    yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return (yaw + math.pi / 4) % (math.pi / 2) - math.pi / 4


def build_world(seed):
    """The scene with the cubes moved (up to 2 cm) and turned (up to 20 degrees) by `seed`."""
    scene = json.loads(SCENE.read_text())
    rng = np.random.default_rng(seed)
    for body in scene["bodies"]:
        if body["name"] in CUBES:
            if seed != 0:
                body["position"][0] += rng.uniform(-0.02, 0.02)
                body["position"][1] += rng.uniform(-0.02, 0.02)
                yaw = rng.uniform(-math.radians(20), math.radians(20))
                body["orientation"] = [math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)]
    return mabd.World.from_json(json.dumps(scene), name=str(SCENE), base_dir=str(SCENE.parent))


class Arm:
    """Joint-space PD drives on the arm and the fingers, fed by IK of gripper waypoints."""

    def __init__(self, world):
        self.w = world
        self.chain = mabd.arm_chain(world, "panda_link7")
        self.q = list(READY)
        for j, target in zip(self.chain, READY):
            world.set_drive(j, mabd.JointDrive(mode=mabd.DriveMode.Position, target=target,
                                               stiffness=ARM_GAINS[0], damping=ARM_GAINS[1]))
        for f in FINGERS:
            world.set_drive(f, mabd.JointDrive(mode=mabd.DriveMode.Position, target=OPEN,
                                               stiffness=FINGER_GAINS[0],
                                               damping=FINGER_GAINS[1]))
        self.steps = 0
        self.wall = 0.0
        self.newton = 0

    def step(self, n=1):
        for _ in range(n):
            t0 = time.perf_counter()
            self.w.step()
            self.wall += time.perf_counter() - t0
            self.newton += self.w.last_step.newton_iterations
            self.steps += 1

    def pose(self):
        return mabd.chain_pose(self.w, self.chain, "panda_link7", self.q,
                               tool_position=TOOL_POSITION, tool_orientation=TOOL_ORIENTATION)

    def move_joints(self, target, seconds):
        """Joint-space move from the current targets to `target` (smooth in time)."""
        start = list(self.q)
        n = max(1, round(seconds / self.w.dt))
        for k in range(1, n + 1):
            s = 0.5 - 0.5 * math.cos(math.pi * k / n)
            self.q = [a + s * (b - a) for a, b in zip(start, target)]
            for j, v in zip(self.chain, self.q):
                self.w.set_drive_target(j, v)
            self.step()

    def move_to(self, position, yaw, seconds):
        """Straight-line gripper motion to `position` (m, world), pointing down, turned by yaw."""
        p0, q0 = self.pose()
        n = max(1, round(seconds / self.w.dt))
        path_p, path_q = mabd.cartesian_line(p0, q0, position, down(yaw), n)
        for k in range(1, n + 1):
            s = 0.5 - 0.5 * math.cos(math.pi * k / n)  # eased along the line
            i = s * n
            lo = min(int(i), n - 1)
            f = i - lo
            p = (1 - f) * path_p[lo] + f * path_p[lo + 1]
            q = path_q[lo] if f < 0.5 else path_q[lo + 1]
            r = mabd.solve_ik(self.w, self.chain, "panda_link7", p, q,
                              tool_position=TOOL_POSITION, tool_orientation=TOOL_ORIENTATION,
                              start=self.q)
            if not r["converged"]:
                raise RuntimeError(f"IK failed at {p} (error {r['position_error']:.2e} m)")
            self.q = list(r["positions"])
            for j, v in zip(self.chain, self.q):
                self.w.set_drive_target(j, v)
            self.step()

    def grip(self, target, seconds):
        """Fingers to `target` (m) at FINGER_SPEED, then held there for the rest of `seconds`.
        A step change of the target would fling the 15 g fingers at the cube at the full 20 N
        (1,300 m/s^2): they would cross the cube's 1.5 cm gap and the cube within one step."""
        start = self.w.joint_drive(FINGERS[0]).target
        n = max(1, round(seconds / self.w.dt))
        for k in range(1, n + 1):
            s = min(1.0, k * self.w.dt * FINGER_SPEED / max(abs(target - start), 1e-9))
            for f in FINGERS:
                self.w.set_drive_target(f, start + s * (target - start))
            self.step()


def run(seed, recorder_path=None):
    world = build_world(seed)
    arm = Arm(world)
    rec = None
    if recorder_path:
        rec = mabd.Recorder(world)
        every = mabd.default_frame_every(world.dt)
        orig_step = arm.step

        def recording_step(n=1):
            for _ in range(n):
                orig_step()
                if arm.steps % every == 0:
                    rec.record()

        arm.step = recording_step
    arm.move_joints(READY, 1.0)  # from the model's zero configuration
    for level, name in enumerate(CUBES):
        c = world.com_position(name)
        yaw = yaw_of(world.pose(name).orientation)
        above = 0.12
        arm.move_to((c[0], c[1], c[2] + above), yaw, 1.2)
        arm.move_to((c[0], c[1], c[2]), yaw, 0.8)
        arm.grip(CLOSED, 0.6)
        arm.move_to((c[0], c[1], c[2] + above + SIDE * level), yaw, 0.8)
        z = SIDE / 2 + SIDE * level + 0.002
        arm.move_to((STACK_XY[0], STACK_XY[1], z + above), 0.0, 1.2)
        arm.move_to((STACK_XY[0], STACK_XY[1], z), 0.0, 0.8)
        arm.grip(OPEN, 0.5)
        arm.move_to((STACK_XY[0], STACK_XY[1], z + above), 0.0, 0.6)
    arm.move_joints(READY, 1.0)
    arm.step(100)  # 1 s for the stack to settle
    errors = []
    for level, name in enumerate(CUBES):
        c = world.com_position(name)
        w, x, y, _ = world.pose(name).orientation
        tilt = math.degrees(math.acos(min(1.0, abs(1 - 2 * (x * x + y * y)))))  # cube z vs world z
        errors.append((float(np.hypot(*(c[:2] - STACK_XY))), float(c[2] - (SIDE / 2 + SIDE * level)),
                       tilt))
    ok = all(r < 0.01 and abs(dz) < 0.005 and tilt < 5 for r, dz, tilt in errors)
    if rec is not None:
        rec.write_glb(recorder_path)
        try:
            print(f"viewer page: {mabd.write_viewer(recorder_path)}")
        except Exception as e:  # noqa: BLE001 (a build without the viewer bundle)
            print(f"no viewer page: {e}")
    return ok, errors, arm


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=1, help="run seeds 0 .. N-1")
    p.add_argument("--out", default="out/pick_and_place", help="output stem (.glb, .html)")
    a = p.parse_args()
    successes = 0
    total_steps, total_wall, total_newton = 0, 0.0, 0
    for seed in range(a.seeds):
        glb = a.out + ".glb" if seed == 0 else None
        if glb:
            os.makedirs(os.path.dirname(glb) or ".", exist_ok=True)
        ok, errors, arm = run(seed, glb)
        successes += ok
        total_steps += arm.steps
        total_wall += arm.wall
        total_newton += arm.newton
        detail = ", ".join(f"{n}: {r * 1000:.1f} mm off axis, {dz * 1000:+.1f} mm, {t:.1f} deg"
                           for n, (r, dz, t) in zip(CUBES, errors))
        print(f"seed {seed}: {'stacked' if ok else 'FAILED'} ({detail}); "
              f"{arm.steps} steps, {1000 * arm.wall / arm.steps:.3f} ms/step")
    print(f"success {successes}/{a.seeds}; {1000 * total_wall / total_steps:.3f} ms/step mean, "
          f"{total_newton / total_steps:.2f} Newton iterations/step, h = 0.01 s")
    return 0 if successes == a.seeds else 1


if __name__ == "__main__":
    sys.exit(main())
