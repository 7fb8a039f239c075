#!/usr/bin/env python3
"""Writes scenes/pulley.json: a chain of 1,500 steel capsule links (ball joints, 2 cm pitch)
over two wheels hinged to the world, a 20 kg anchor on its left end and a 2 kg weight on its
right. Released at rest, the anchor falls and drags the chain over the wheels, which the
chain's friction spins. h = 0.01 s, exact contact. Run from the repository root:
python3 scenes/tools/pulley.py [--links N]

Over 3 s (the file's 200 steps and 100 more) the anchor drags the chain over the wheels to
2.2 m/s, the energy falling at every step and no link deeper than 0.6 mm in a wheel.
Two faults of the contacts between moving bodies made it diverge once it ran at about 2 m/s
(at 1.3 s with 300 links, 0.5 s with 1,500): the normal rows pushed a link at a point of its
surface, which the link's spin about its own axis carried off the line of contact (the spin
grew sevenfold per step), and links receding from a wheel but pulled onto it by the chain's
tension (3 g) were no contact candidates. With 300 links, the chain runs off the wheels at
2.1 s and the 2 kg weight whipped round at the end, a 0.15 m steel box under one Newton
iteration, gained energy (up to 1,900 J in a step at 2.14 s) until steps that gain energy
under implicit Euler iterated on (up to 7 iterations there; the energy now falls at every step). The contact solve costs about
40 ms per step at 1,500 links (median, 54 ms mean; 50 points on the wheels), against the
paper's 2 ms for its pulley. The paper's scene also lifts the anchor with a drive before releasing it; a scene
file has no controller to release a drive, so this one starts from the release.
"""
import argparse
import json
import math

R = 0.3          # m, wheel radius (a capsule along y: its cylindrical part carries the chain)
WHEEL_X = 0.6    # m, wheels at x = -0.6 and 0.6
H = 16.0         # m, height of the wheels' axles
PITCH = 0.02     # m, link length (joint to joint)
RL = 0.005       # m, link capsule radius
GAP = 1e-3       # m, initial gap between the chain and the wheels


def chain_path(n):
    """n + 1 joint points: up the left side, over both wheels, down the right side."""
    r = R + RL + GAP  # the chain axis' distance from a wheel axle
    arc = math.pi / 2 * r
    span = 2 * WHEEL_X
    rest = n * PITCH - 2 * arc - span
    left = rest * 0.5
    right = rest - left

    def at(s):
        """Point at arc length s from the left end."""
        if s < left:
            return (-WHEEL_X - r, H - (left - s))
        s -= left
        if s < arc:  # over the left wheel, from angle pi to pi/2
            a = math.pi - s / r
            return (-WHEEL_X + r * math.cos(a), H + r * math.sin(a))
        s -= arc
        if s < span:
            return (-WHEEL_X + s, H + r)
        s -= span
        if s < arc:  # over the right wheel, from pi/2 to 0
            a = math.pi / 2 - s / r
            return (WHEEL_X + r * math.cos(a), H + r * math.sin(a))
        s -= arc
        return (WHEEL_X + r, H - s)

    return [at(k * PITCH) for k in range(n + 1)]


def quat_z_to(d):
    """Quaternion (w, x, y, z) turning the z axis onto the unit vector d (in the xz plane)."""
    dx, dz = d
    angle = math.atan2(dx, dz)  # rotation about y taking z to (dx, 0, dz)
    return [math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--links", type=int, default=1500)
    p.add_argument("--out", default="scenes/pulley.json")
    p.add_argument("--youngs", type=float, default=2e11, help="links' Young's modulus (Pa)")
    a = p.parse_args()
    pts = chain_path(a.links)
    bodies = []
    joints = []
    # Wheels: capsules of radius R with a 0.1 m cylindrical part along y.
    for side, x in (("left", -WHEEL_X), ("right", WHEEL_X)):
        name = f"wheel_{side}"
        bodies.append({"name": name, "material": "wheel",
                       "shape": {"type": "capsule", "radius": R, "length": 0.1},
                       "position": [x, 0, H],
                       "orientation": [math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0]})
        joints.append({"name": f"axle_{side}", "type": "hinge", "bodies": ["world", name],
                       "anchor": [x, 0, H], "axis": [0, 1, 0]})
    for k in range(a.links):
        (x0, z0), (x1, z1) = pts[k], pts[k + 1]
        d = ((x1 - x0) / PITCH, (z1 - z0) / PITCH)
        n = math.hypot(*d)
        d = (d[0] / n, d[1] / n)
        bodies.append({"name": f"link{k}", "material": "steel",
                       "shape": {"type": "capsule", "radius": RL, "length": PITCH - 2 * RL},
                       "position": [(x0 + x1) / 2, 0, (z0 + z1) / 2],
                       "orientation": quat_z_to(d)})
        if k > 0:
            joints.append({"name": f"j{k}", "type": "ball", "bodies": [f"link{k - 1}", f"link{k}"],
                           "anchor": [x0, 0, z0]})
    # The anchor (20 kg) below the left end, the weight (2 kg) below the right end.
    for name, (x, z), mass, link in (("anchor", pts[0], 20.0, "link0"),
                                     ("weight", pts[-1], 2.0, f"link{a.links - 1}")):
        bodies.append({"name": name, "material": "steel", "mass": mass,
                       "shape": {"type": "box", "size": [0.15, 0.15, 0.15]},
                       "position": [x, 0, z - 0.075 - 1e-3]})
        joints.append({"name": f"hook_{name}", "type": "ball", "bodies": [link, name],
                       "anchor": [x, 0, z]})
    scene = {
        "description": (
            f"A chain of {a.links} steel capsule links (2 cm pitch, ball joints) over two wheels "
            "(0.3 m, hinged to the world), a 20 kg anchor on its left end and a 2 kg weight on "
            "its right, released at rest: the anchor falls and drags the chain over the wheels, "
            "which friction spins. Contact between moving bodies (the links and the wheels), "
            "exact model, h = 0.01 s, 2 s. Written by scenes/tools/pulley.py."),
        "settings": {"dt": 0.01, "gravity": [0, 0, -9.81], "steps": 200,
                     "contact": {"model": "exact"}},
        "materials": {
            "steel": {"density": 7800, "youngs_modulus": a.youngs, "friction": 0.5},
            "wheel": {"density": 1000, "youngs_modulus": 1e9, "friction": 0.5},
        },
        "bodies": bodies,
        "joints": joints,
    }
    with open(a.out, "w") as f:
        json.dump(scene, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
