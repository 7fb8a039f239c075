#!/usr/bin/env python3
"""Writes scenes/ragdolls.json: 27 ragdolls of 11 capsules dropped onto a corner-pinned net.

The paper's "Ragdolls" scene: 27 articulated ragdolls (ball joints at the spine, neck,
shoulders and hips, hinges at the elbows and knees, each with a bending and twist spring)
fall in three layers onto a 20 x 20 ball-joint net (400 sphere nodes and 760 capsule edges,
1,160 links) pinned at its four corners. Ragdolls hit the net and one another; the net's own
links do not collide with each other (collision groups). Soft ragdolls (E = 1 MPa); the net's links are
stiffer (E = 100 MPa): at 1 MPa the links at the corners, which carry the 430 kg of net and
ragdolls, would stretch to several times their length. h = 1/200 s, exact contact with
friction. Run from the repository root:
python3 scenes/tools/ragdolls.py [--count-per-side 3] [--layers 3]

Over its 3 s (600 steps) the energy falls at every step, from 5,225 J to -4,925 J (the
potential energy counts from the net's plane). The first layer lands at 0.48 s; up to 252
points touch at once. The exact model holds the joints to 7.7e-5 m, but a net link pressed
against a limb comes about 1 mm further in at each step while the exact model pushes a
penetration out at 0.1 m/s, so limbs end up to 3.1 cm into the 1.2 cm links. That comes with
the soft flesh (strained by up to 8%; the rows hold material points of the deformed body,
detection takes its rigid pose): with --youngs 1e8 the deepest point over the first 0.9 s is
3.8 mm instead of 2.4 cm. The contact solve takes 97% of the
0.48 s per step (mean; the paper: 17 ms). With penalty contact the run diverges at step 116:
a light net node, its springs stiffened by its own mass, strains under a ragdoll.
"""
import argparse
import json
import math
import os
import random

# The ragdoll's capsules and joints are those of scenes/ragdoll_tumble.json (standing on
# z = 0, 1.87 m tall), without its limits and initial velocities; each joint gets a spring of
# this stiffness at scale 1 (N m/rad).
TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ragdoll_tumble.json")
SPRINGS = {"spine": 400.0, "neck": 100.0, "shoulder_l": 60.0, "shoulder_r": 60.0,
           "elbow_l": 30.0, "elbow_r": 30.0, "hip_l": 200.0, "hip_r": 200.0,
           "knee_l": 100.0, "knee_r": 100.0}


def load_template():
    """(name, radius, length, centre) per capsule and (name, type, parent, child, anchor,
    hinge axis or None, spring stiffness) per joint, from TEMPLATE."""
    with open(TEMPLATE) as f:
        t = json.load(f)
    parts = [(b["name"], b["shape"]["radius"], b["shape"]["length"], tuple(b["position"]))
             for b in t["bodies"]]
    joints = [(j["name"], j["type"], j["bodies"][0], j["bodies"][1], tuple(j["anchor"]),
               tuple(j["axis"]) if j["type"] == "hinge" else None, SPRINGS[j["name"]])
              for j in t["joints"]]
    return parts, joints


NET_GROUP, DOLL_GROUP = 2, 4


def quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def quat_axis(axis, angle):
    s = math.sin(angle / 2)
    return (math.cos(angle / 2), axis[0] * s, axis[1] * s, axis[2] * s)


def rotate(q, v):
    w, x, y, z = q
    p = quat_mul(quat_mul(q, (0.0, *v)), (w, -x, -y, -z))
    return p[1:]


def r6(v):
    return [round(c, 6) for c in v]


def ragdoll(template, prefix, scale, q, centre):
    """Bodies and joints of one ragdoll turned by q about its pelvis, the pelvis at centre."""
    parts, joints_def = template
    pelvis = parts[0][3]

    def place(p):
        local = [scale * (p[i] - pelvis[i]) for i in range(3)]
        return r6([centre[i] + c for i, c in enumerate(rotate(q, local))])

    bodies = [{
        "name": f"{prefix}/{name}", "material": "flesh",
        "shape": {"type": "capsule", "radius": round(scale * r, 6), "length": round(scale * l, 6)},
        "position": place(c), "orientation": r6(q),
        "collision": {"group": DOLL_GROUP, "mask": NET_GROUP | DOLL_GROUP},
    } for name, r, l, c in parts]
    joints = []
    for name, kind, a, b, anchor, axis, k in joints_def:
        j = {"name": f"{prefix}/{name}", "type": kind, "bodies": [f"{prefix}/{a}", f"{prefix}/{b}"],
             "anchor": place(anchor),
             # A bending and twist spring towards the initial pose; stiffness scales as size^4
             # (the weight a joint carries, times its lever arm), damping as size^5.
             "spring": {"stiffness": round(k * scale ** 4, 6), "damping": round(0.02 * k * scale ** 5, 6)}}
        if axis:
            j["axis"] = r6(rotate(q, axis))
        joints.append(j)
    return bodies, joints


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count-per-side", type=int, default=3, help="ragdolls per row of a layer")
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--n", type=int, default=20, help="net nodes per side")
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--youngs", type=float, default=1e6, help="ragdolls' Young's modulus (Pa)")
    p.add_argument("--out", default="scenes/ragdolls.json")
    a = p.parse_args()
    for key in ("count_per_side", "layers", "steps"):
        if getattr(a, key) < 1:
            p.error(f"--{key.replace('_', '-')} must be at least 1 (got {getattr(a, key)})")
    if a.n < 2:
        p.error(f"--n must be at least 2 (got {a.n})")
    if not a.youngs > 0:
        p.error(f"--youngs must be positive (got {a.youngs})")
    out_dir = os.path.dirname(a.out) or "."
    if not os.path.isdir(out_dir):
        p.error(f"--out {a.out}: no directory '{out_dir}' (run from the repository root)")
    rng = random.Random(a.seed)
    template = load_template()

    spacing = 0.25           # m, net pitch
    side = spacing * (a.n - 1)
    scale = 0.6              # ragdolls 1.1 m tall
    cell = side / a.count_per_side
    bodies, joints = [], []
    for layer in range(a.layers):
        for i in range(a.count_per_side):
            for j in range(a.count_per_side):
                k = (layer * a.count_per_side + i) * a.count_per_side + j
                # Lying face down or up, turned about z at random, slightly tilted.
                q = quat_axis((0, 1, 0), math.pi / 2 * rng.choice((-1, 1)))
                q = quat_mul(quat_axis((1, 0, 0), rng.uniform(-0.3, 0.3)), q)
                q = quat_mul(quat_axis((0, 0, 1), rng.uniform(0, 2 * math.pi)), q)
                centre = ((i + 0.5) * cell + rng.uniform(-0.1, 0.1),
                          (j + 0.5) * cell + rng.uniform(-0.1, 0.1),
                          1.0 + 0.6 * layer)
                b, jt = ragdoll(template, f"doll{k}", scale, q, centre)
                bodies += b
                joints += jt

    n_dolls = a.layers * a.count_per_side ** 2
    n_net = a.n * a.n + 2 * a.n * (a.n - 1)
    scene = {
        "description": (
            f"{n_dolls} ragdolls of 11 capsules (1.1 m tall; ball joints at the spine, neck, "
            "shoulders and hips and hinges at the elbows and knees, each with a bending and "
            "twist spring towards the initial pose) dropped in "
            f"{a.layers} layers onto a {a.n} x {a.n} ball-joint net ({n_net} links: sphere "
            f"nodes and capsule edges, {spacing} m pitch) pinned at its four corners. The "
            "ragdolls collide with the net and with one another; the net's links do not "
            "collide with each other (collision groups). Soft ragdolls "
            f"(E = {a.youngs / 1e6:g} MPa), net links "
            "of E = 100 MPa. Exact "
            "contact with friction 0.5, h = 1/200 s. Written by scenes/tools/ragdolls.py."),
        "settings": {
            "dt": 0.005, "gravity": [0, 0, -9.81], "newton_iterations": 1, "steps": a.steps,
            "contact": {"model": "exact", "friction": True},
        },
        "materials": {
            "flesh": {"density": 1000, "youngs_modulus": a.youngs, "poisson_ratio": 0.3, "friction": 0.5},
            "net": {"density": 1000, "youngs_modulus": 1e8, "poisson_ratio": 0.3, "friction": 0.5},
        },
        "bodies": bodies,
        "joints": joints,
        "generators": [{
            "type": "net", "name": "net", "n": a.n, "spacing": spacing, "plane": "xy",
            "pinned": "corners", "origin": [0, 0, 0],
            "node": {"shape": {"type": "sphere", "radius": 0.02}, "material": "net",
                     "collision": {"group": NET_GROUP, "mask": DOLL_GROUP}},
            "edge": {"shape": {"type": "capsule", "radius": 0.012, "length": round(spacing - 0.024, 6)},
                     "material": "net", "collision": {"group": NET_GROUP, "mask": DOLL_GROUP}},
        }],
    }
    with open(a.out, "w") as f:
        json.dump(scene, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {a.out}: {len(bodies)} ragdoll bodies, {n_net} net links")


if __name__ == "__main__":
    main()
