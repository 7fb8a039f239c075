#!/usr/bin/env python3
"""Writes scenes/soft_on_net.json: the armadillo-like soft body of models/soft_blob (1,473
nodes, 5,237 tets, E = 1e5 Pa) standing on a horizontal 30 x 30 net of affine links (900
sphere nodes, 1,740 box edges: 2,640 bodies, 3,480 ball joints), its 16 sole nodes attached
to the two net nodes under its feet. The net's four corners are pinned to a kinematic frame
that turns about the vertical at 0.5 rad/s: the anchors twist the net, which sags and swings
under the soft body. h = 0.01 s. Run from the repository root:
python3 scenes/tools/soft_on_net.py [--n N]

The soft body stands on the net by attachments, not by contact: soft bodies do not collide
yet.
"""
import argparse
import json

SPACING = 0.1    # m, net node spacing
NODE_R = 0.01    # m, sphere node radius
SOLE_Z = 0.001   # m, the blob's sole nodes lie below this (its feet stand on z = 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=30, help="net nodes per side (even)")
    parser.add_argument("--out", default="scenes/soft_on_net.json")
    args = parser.parse_args()
    n = args.n
    c = n // 2  # the feet stand on nodes (c, c - 1) and (c, c), either side of the centre
    centre_x = (c - 0.5) * SPACING
    centre_y = c * SPACING
    top = NODE_R  # the soles rest on top of the node spheres
    bodies = n * n + 2 * n * (n - 1)
    scene = {
        "description": (
            f"An armadillo-like soft body (models/soft_blob: 1473 nodes, 5237 tets, E = 1e5 Pa) "
            f"standing on a horizontal {n} x {n} net of affine links ({bodies} bodies, "
            f"{4 * n * (n - 1)} ball joints), its 16 sole nodes attached to the two net nodes "
            f"under its feet; the net's corners are pinned to a kinematic frame that turns about "
            f"the vertical at 0.5 rad/s. h = 0.01 s. Written by scenes/tools/soft_on_net.py."),
        "settings": {"dt": 0.01, "gravity": [0, 0, -9.81], "steps": 100},
        "materials": {"net": {"density": 1000, "youngs_modulus": 1e9, "poisson_ratio": 0.3}},
        "bodies": [{
            "name": "frame", "kind": "kinematic",
            "shape": {"type": "box", "size": [0.05, 0.05, 0.05]}, "material": "net",
            "position": [centre_x + 0.5 * SPACING - 0.5 * SPACING, centre_y - 0.05, -0.5],
            "angular_velocity": [0, 0, 0.5],
            "collision": {"enabled": False}}],
        "generators": [{
            "type": "net", "name": "net", "n": n, "spacing": SPACING,
            "node": {"shape": {"type": "sphere", "radius": NODE_R}, "material": "net"},
            "edge": {"shape": {"type": "box", "size": [SPACING, 0.01, 0.01]}, "material": "net"},
            "origin": [0, 0, 0], "plane": "xy", "pinned": "corners", "attach": "frame"}],
        "soft_bodies": [{
            "name": "blob", "mesh": "../models/soft_blob.node",
            "position": [centre_x, centre_y, top],
            "material": {"density": 1000, "youngs_modulus": 1e5, "poisson_ratio": 0.3},
            "attach": [
                {"body": f"net/node_{c}_{c - 1}",
                 "region": {"min": [-1e3, -1e3, -1e3], "max": [centre_x, 1e3, top + SOLE_Z]}},
                {"body": f"net/node_{c}_{c}",
                 "region": {"min": [centre_x, -1e3, -1e3], "max": [1e3, 1e3, top + SOLE_Z]}}]}],
    }
    with open(args.out, "w") as f:
        json.dump(scene, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
