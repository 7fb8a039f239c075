#!/usr/bin/env python3
"""Writes scenes/armadillo.json: the armadillo-like soft body of models/soft_blob (1,473
nodes, 5,237 tets, E = 1e5 Pa) dropped on a horizontal 30 x 30 net of affine links (900
sphere nodes, 1,740 capsule edges: 2,640 bodies, 3,480 ball joints) whose four corners are
pinned to a kinematic frame; the frame turns about the vertical at 0.5 rad/s from t = 0.5 s,
so the anchors twist the net under the soft body. Exact contact with friction between the
soft body's surface nodes and the net, implicit Euler, h = 0.01 s, tolerance 1e-6 m (the
paper's). The links are 1.5 cm thick, more than half the soft body's surface node spacing
(2.5 cm), so its nodes alone keep them out (face_contacts off). Run from the repository
root: python3 scenes/tools/armadillo.py [--n N] [--spacing S] [--radius R]
"""
import argparse
import json
import math



def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=30, help="net nodes per side")
    parser.add_argument("--spacing", type=float, default=0.035, help="net node spacing (m)")
    parser.add_argument("--radius", type=float, default=0.015,
                        help="radius of the net's sphere nodes and capsule edges (m)")
    parser.add_argument("--out", default="scenes/armadillo.json")
    args = parser.parse_args()
    n, spacing, radius = args.n, args.spacing, args.radius
    if not 0 < 2 * radius < spacing:
        parser.error("--radius must be positive and less than half of --spacing")
    half = 0.5 * (n - 1) * spacing  # the net is centred on the origin
    bodies = n * n + 2 * n * (n - 1)
    # The frame holds still for 0.5 s (the soft body lands), then turns at 0.5 rad/s.
    keys = [{"time": 0.0, "position": [0, 0, -0.2], "orientation": [1, 0, 0, 0]},
            {"time": 0.5, "position": [0, 0, -0.2], "orientation": [1, 0, 0, 0]}]

    for k in range(1, 9):
        angle = 0.5 * 0.5 * k  # every 0.5 s, 0.25 rad further
        keys.append({"time": 0.5 + 0.5 * k, "position": [0, 0, -0.2],
                     "orientation": [math.cos(angle / 2), 0, 0, math.sin(angle / 2)]})
    scene = {
        "description": (
            f"Armadillo on a net: an armadillo-like soft body (models/soft_blob: 1473 nodes, "
            f"5237 tets, E = 1e5 Pa, 500 kg/m^3) dropped on a horizontal {n} x {n} net of "
            f"affine links ({bodies} bodies, {4 * n * (n - 1)} ball joints, {spacing} m "
            f"spacing, {radius} m thick) whose corners are pinned to a kinematic frame; from "
            f"t = 0.5 s the frame turns about the vertical at 0.5 rad/s, twisting the net. "
            f"Exact contact with friction between the soft body's surface nodes and the net, "
            f"implicit Euler, h = 0.01 s. Written by scenes/tools/armadillo.py."),
        "settings": {"dt": 0.01, "gravity": [0, 0, -9.81], "steps": 200, "tolerance": 1e-6,
                     "time_integration": "implicit_euler",
                     "contact": {"model": "exact", "friction": True}},
        "materials": {"net": {"density": 1000, "youngs_modulus": 1e9, "poisson_ratio": 0.3,
                              "friction": 0.5}},
        "bodies": [{
            "name": "frame", "kind": "kinematic",
            "shape": {"type": "box", "size": [0.05, 0.05, 0.05]}, "material": "net",
            "keyframes": keys,
            "collision": {"enabled": False}}],
        "generators": [{
            "type": "net", "name": "net", "n": n, "spacing": spacing,
            "node": {"shape": {"type": "sphere", "radius": radius}, "material": "net"},
            "edge": {"shape": {"type": "capsule", "radius": radius,
                               "length": spacing - 2 * radius}, "material": "net"},
            "origin": [-half, -half, 0], "plane": "xy", "pinned": "corners", "attach": "frame"}],
        "soft_bodies": [{
            "name": "armadillo", "mesh": "../models/soft_blob.node",
            "position": [0, 0, radius + 0.02],
            "face_contacts": False,
            "material": {"density": 500, "youngs_modulus": 1e5, "poisson_ratio": 0.3,
                         "friction": 0.5}}],
    }
    with open(args.out, "w") as f:
        json.dump(scene, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
