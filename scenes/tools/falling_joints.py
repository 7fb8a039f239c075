#!/usr/bin/env python3
"""Writes scenes/falling_joints.json and meshes/bowl.obj: 720 jointed pairs of boxes (180 each
joined by a ball, universal, hinge and prismatic joint) dropped into a static bowl, the paper's
"falling joints" scene. Run from the repository root: python3 scenes/tools/falling_joints.py

Not shipped yet: the scene runs its 300 steps (3 s), but once the pile forms (0.6 s in) a
step takes 3.7 s (median, up to 20 s), 99% of it in the complementarity solve of the 2,000 to
3,460 contacts between the boxes, against the paper's 54 ms. Boxes landing on the pile at
about 4 m/s whose edges cross go up to 7.5 cm into one another within a step (a contact row is
linearised at the step's start; an edge against an edge is one point), and stay a few cm
in while the exact model pushes them apart at 0.1 m/s.
"""
import json
import math
import random

BOWL_RADIUS = 3.0  # m, the sphere the bowl is cut from
BOWL_DEPTH = 1.5  # m, from the rim down to the bottom
RINGS, SEGMENTS = 16, 48


def bowl_obj(path):
    """An open spherical cap, normals facing the centre (inside up)."""
    R = BOWL_RADIUS
    theta_max = math.acos((R - BOWL_DEPTH) / R)  # from the bottom pole to the rim
    verts = [(0.0, 0.0, -R)]
    for i in range(1, RINGS + 1):
        t = theta_max * i / RINGS
        for j in range(SEGMENTS):
            p = 2 * math.pi * j / SEGMENTS
            verts.append((R * math.sin(t) * math.cos(p), R * math.sin(t) * math.sin(p),
                          -R * math.cos(t)))
    faces = []
    for j in range(SEGMENTS):  # fan round the pole
        a, b = 1 + j, 1 + (j + 1) % SEGMENTS
        faces.append((0, a, b))  # counter-clockwise seen from inside: normals inwards
    for i in range(RINGS - 1):
        r0, r1 = 1 + i * SEGMENTS, 1 + (i + 1) * SEGMENTS
        for j in range(SEGMENTS):
            a, b = r0 + j, r0 + (j + 1) % SEGMENTS
            c, d = r1 + j, r1 + (j + 1) % SEGMENTS
            faces.append((a, d, b))
            faces.append((a, c, d))
    with open(path, "w") as f:
        f.write("# bowl: open spherical cap of radius %.2f m, %.2f m deep (falling_joints.py)\n"
                % (R, BOWL_DEPTH))
        for v in verts:
            f.write("v %.6f %.6f %.6f\n" % v)
        for a, b, c in faces:  # OBJ is 1-based
            f.write("f %d %d %d\n" % (a + 1, b + 1, c + 1))


def main():
    random.seed(7)
    bowl_obj("meshes/bowl.obj")
    bodies = [{
        "name": "bowl", "kind": "static", "material": "bowl",
        # The cap's sphere centre sits BOWL_RADIUS above its bottom; the bottom at z = 0.
        "position": [0, 0, BOWL_RADIUS],
        "shape": {"type": "mesh", "file": "../meshes/bowl.obj"},
    }]
    joints = []
    types = ["ball", "universal", "hinge", "prismatic"]
    link = [0.16, 0.06, 0.06]  # m, each body of a pair
    # 720 pairs in 8 layers of 9 x 10 above the bowl (0.4 x 0.36 m apart, layers 0.3 m).
    k = 0
    for layer in range(8):
        for i in range(9):
            for j in range(10):
                t = types[k % 4]
                cx = (i - 4) * 0.4
                cy = (j - 4.5) * 0.36
                cz = BOWL_DEPTH + 0.4 + 0.3 * layer
                yaw = random.uniform(0, math.pi)
                ux, uy = math.cos(yaw), math.sin(yaw)
                half = 0.5 * link[0] + 0.005  # centres 1 cm apart at the joint
                a_pos = [cx - ux * half, cy - uy * half, cz]
                b_pos = [cx + ux * half, cy + uy * half, cz]
                qz = [math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)]
                name = "%s_%03d" % (t, k // 4)
                for side, pos in (("a", a_pos), ("b", b_pos)):
                    bodies.append({"name": name + "/" + side, "material": "wood",
                                   "shape": {"type": "box", "size": link},
                                   "position": [round(x, 6) for x in pos],
                                   "orientation": [round(x, 8) for x in qz]})
                joint = {"name": name, "type": t, "bodies": [name + "/a", name + "/b"],
                         "anchor": [round(cx, 6), round(cy, 6), round(cz, 6)]}
                if t == "hinge":
                    joint["axis"] = [round(-uy, 8), round(ux, 8), 0]  # across the pair
                elif t == "prismatic":
                    joint["axis"] = [round(ux, 8), round(uy, 8), 0]  # along the pair
                    joint["limits"] = {"lower": -0.02, "upper": 0.02}
                elif t == "universal":
                    joint["axes"] = [[round(-uy, 8), round(ux, 8), 0], [0, 0, 1]]
                joints.append(joint)
                k += 1
    scene = {
        "description": "The paper's falling-joints scene: 720 jointed pairs of 16 x 6 x 6 cm "
                       "wooden boxes (180 each joined by a ball, universal, hinge and "
                       "prismatic joint, the prismatic ones with +-2 cm limits) dropped in 8 "
                       "layers into a static bowl (an open spherical cap, 3 m radius, 1.5 m "
                       "deep, meshes/bowl.obj). Contact between the pairs and with the bowl, "
                       "exact model with friction; h = 0.01 s, 3 s. Generated by "
                       "scenes/tools/falling_joints.py.",
        "settings": {"dt": 0.01, "gravity": [0, 0, -9.81], "steps": 300,
                     "time_integration": "implicit_euler",
                     "contact": {"model": "exact"}},
        "materials": {
            "wood": {"density": 700, "youngs_modulus": 1e7, "poisson_ratio": 0.3,
                     "friction": 0.4},
            "bowl": {"density": 1000, "youngs_modulus": 1e9, "poisson_ratio": 0.3,
                     "friction": 0.4},
        },
        "bodies": bodies,
        "joints": joints,
    }
    with open("scenes/falling_joints.json", "w") as f:
        json.dump(scene, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
