#!/usr/bin/env python3
"""Generates models/soft_blob.node and .ele: an armadillo-like soft body (torso, head with
snout and ears, two arms, two legs, a tail) for the FEM module (src/fem).

The shape is the zero level set of a smooth union of capsules and ellipsoids (metres, z up,
feet on z = 0, about 0.32 x 0.35 x 0.58 m). Its surface is extracted by surface nets on a
regular grid (a closed, consistently oriented triangle mesh), smoothed a little (Laplacian
steps projected back onto the level set), written as an OFF file and tetrahedralised by
TetGen (Debian package `tetgen`), which keeps that surface mesh:

    python3 models/tools/soft_blob.py            # needs `tetgen` on the PATH

The result is rewritten with a comment header, coordinates rounded to 1e-6 m.
"""
import math
import os
import subprocess
import sys
import tempfile

H = 0.025  # grid spacing (m)
TETGEN = "-pq1.5/12YQ"  # PLC, radius-edge <= 1.5, dihedral >= 12 deg, keep surface, quiet
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "soft_blob")


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def capsule(p, a, b, r):
    """Signed distance to the capsule of radius r around segment ab."""
    ab, ap = sub(b, a), sub(p, a)
    t = max(0.0, min(1.0, dot(ap, ab) / dot(ab, ab)))
    q = (a[0] + t * ab[0], a[1] + t * ab[1], a[2] + t * ab[2])
    return math.sqrt(dot(sub(p, q), sub(p, q))) - r


def ellipsoid(p, c, r):
    """Approximate signed distance to an axis-aligned ellipsoid (centre c, radii r)."""
    d = sub(p, c)
    k = math.sqrt(sum((d[i] / r[i]) ** 2 for i in range(3)))
    return (k - 1) * min(r)


def smin(a, b, k):
    """Polynomial smooth minimum (blend width k)."""
    h = max(0.0, min(1.0, 0.5 + 0.5 * (b - a) / k))
    return b * (1 - h) + a * h - k * h * (1 - h)


def blob(p):
    """Signed distance-like function: negative inside the soft body."""
    parts = [
        ellipsoid(p, (0, 0, 0.30), (0.11, 0.09, 0.14)),              # torso
        ellipsoid(p, (0, -0.01, 0.48), (0.07, 0.07, 0.065)),         # head
        capsule(p, (0, -0.05, 0.46), (0, -0.11, 0.44), 0.035),      # snout
        capsule(p, (-0.04, 0.0, 0.52), (-0.07, 0.02, 0.58), 0.03),  # ears
        capsule(p, (0.04, 0.0, 0.52), (0.07, 0.02, 0.58), 0.03),
        capsule(p, (-0.09, 0, 0.38), (-0.16, -0.06, 0.25), 0.035),   # arms
        capsule(p, (0.09, 0, 0.38), (0.16, -0.06, 0.25), 0.035),
        capsule(p, (-0.06, 0, 0.22), (-0.08, -0.02, 0.04), 0.045),   # legs
        capsule(p, (0.06, 0, 0.22), (0.08, -0.02, 0.04), 0.045),
        ellipsoid(p, (-0.085, -0.04, 0.03), (0.045, 0.07, 0.03)),    # feet
        ellipsoid(p, (0.085, -0.04, 0.03), (0.045, 0.07, 0.03)),
        capsule(p, (0, 0.07, 0.20), (0, 0.17, 0.08), 0.038),          # tail
    ]
    d = parts[0]
    for q in parts[1:]:
        d = smin(d, q, 0.03)
    return max(d, -p[2])  # flat soles on z = 0


def project(p):
    """Moves p onto the zero level set along the (numerical) gradient, a few Newton steps."""
    e = 1e-5
    for _ in range(3):
        v = blob(p)
        g = [(blob(tuple(p[c] + (e if c == i else 0) for c in range(3))) - v) / e for i in range(3)]
        gg = dot(g, g)
        if gg < 1e-12:
            break
        p = tuple(p[c] - v * g[c] / gg for c in range(3))
    return p


def surface():
    """Surface nets: one vertex per grid cell crossed by the zero level set (the mean of
    its edge crossings, projected onto the level set), one quad (two triangles) per crossed
    grid edge joining the four cells around it. Returns (vertices, triangles), closed and
    oriented outwards."""
    lo = (-0.24 - 0.3 * H, -0.20 - 0.3 * H, -0.7 * H)  # offsets keep nodes off z = 0
    n = [int(math.ceil(0.48 / H)) + 1, int(math.ceil(0.42 / H)) + 1, int(math.ceil(0.66 / H)) + 1]
    pos = lambda i, j, k: (lo[0] + i * H, lo[1] + j * H, lo[2] + k * H)
    f = {}
    for k in range(n[2] + 1):
        for j in range(n[1] + 1):
            for i in range(n[0] + 1):
                f[(i, j, k)] = blob(pos(i, j, k))
    inside = lambda q: f[q] < 0
    verts, index = [], {}

    def cell_vertex(c):
        if c not in index:
            pts = []
            for a in range(8):
                qa = (c[0] + (a & 1), c[1] + ((a >> 1) & 1), c[2] + ((a >> 2) & 1))
                for axis in range(3):
                    if (a >> axis) & 1:
                        continue
                    qb = list(qa)
                    qb[axis] += 1
                    qb = tuple(qb)
                    if inside(qa) != inside(qb):
                        t = f[qa] / (f[qa] - f[qb])
                        pa, pb = pos(*qa), pos(*qb)
                        pts.append(tuple(pa[d] + t * (pb[d] - pa[d]) for d in range(3)))
            m = tuple(sum(p[d] for p in pts) / len(pts) for d in range(3))
            index[c] = len(verts)
            verts.append(project(m))
        return index[c]

    tris = []
    for (i, j, k), v in f.items():
        for axis in range(3):
            q = [i, j, k]
            q[axis] += 1
            q = tuple(q)
            if q not in f or inside((i, j, k)) == inside(q):
                continue
            # The four cells around edge (i,j,k)-q, in counter-clockwise order about +axis.
            u, w = (axis + 1) % 3, (axis + 2) % 3
            cells = []
            for du, dw in ((0, 0), (-1, 0), (-1, -1), (0, -1)):
                c = [i, j, k]
                c[u] += du
                c[w] += dw
                cells.append(tuple(c))
            if any(min(c) < 0 or c[0] >= n[0] or c[1] >= n[1] or c[2] >= n[2] for c in cells):
                raise RuntimeError("the shape touches the grid boundary")
            a, b, c, d = (cell_vertex(c) for c in cells)
            if not inside((i, j, k)):  # normal must point from inside to outside
                a, b, c, d = a, d, c, b
            # Split the quad along its shorter diagonal.
            pa, pb, pc, pd = verts[a], verts[b], verts[c], verts[d]
            if dot(sub(pa, pc), sub(pa, pc)) <= dot(sub(pb, pd), sub(pb, pd)):
                tris += [(a, b, c), (a, c, d)]
            else:
                tris += [(a, b, d), (b, c, d)]
    return verts, tris


def smooth(verts, tris, iterations=3):
    """Moves each vertex to the mean of its neighbours, then back onto the level set: more
    even triangles, hence fewer flat tets along the surface (TetGen -Y keeps the surface)."""
    nb = [set() for _ in verts]
    for a, b, c in tris:
        nb[a] |= {b, c}
        nb[b] |= {a, c}
        nb[c] |= {a, b}
    for _ in range(iterations):
        verts = [project(tuple(sum(verts[j][d] for j in nb[i]) / len(nb[i]) for d in range(3)))
                 for i in range(len(verts))]
    return verts


def check_closed(tris):
    """Every directed edge once and its reverse once: a closed, oriented 2-manifold."""
    edges = {}
    for t in tris:
        for a, b in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
            edges[(a, b)] = edges.get((a, b), 0) + 1
    for (a, b), count in edges.items():
        if count != 1 or edges.get((b, a)) != 1:
            raise RuntimeError("surface not closed/manifold at edge %d-%d: refine H" % (a, b))


def main():
    verts, tris = surface()
    check_closed(tris)
    verts = smooth(verts, tris)
    with tempfile.TemporaryDirectory() as tmp:
        off = os.path.join(tmp, "blob.off")
        with open(off, "w") as out:
            out.write("OFF\n%d %d 0\n" % (len(verts), len(tris)))
            for v in verts:
                out.write("%.9f %.9f %.9f\n" % v)
            for t in tris:
                out.write("3 %d %d %d\n" % t)
        subprocess.run(["tetgen", TETGEN, off], check=True)
        nodes = open(os.path.join(tmp, "blob.1.node")).read().split("\n")
        eles = open(os.path.join(tmp, "blob.1.ele")).read().split("\n")
    head = ("# soft_blob: armadillo-like soft body (metres, z up, feet on z = 0) made by\n"
            "# models/tools/soft_blob.py: surface nets (grid %.3f m, smoothed) on a smooth union\n"
            "# of capsules and ellipsoids, %d surface triangles, tetrahedralised by `tetgen %s`.\n"
            % (H, len(tris), TETGEN))
    rows = [l.split() for l in nodes if l.strip() and not l.startswith("#")]
    with open(OUT + ".node", "w") as out:
        out.write(head)
        out.write("%s 3 0 0\n" % rows[0][0])
        for r in rows[1:]:
            out.write("%s %.6f %.6f %.6f\n" % (r[0], float(r[1]), float(r[2]), float(r[3])))
    rows = [l.split() for l in eles if l.strip() and not l.startswith("#")]
    with open(OUT + ".ele", "w") as out:
        out.write(head)
        out.write("%s 4 0\n" % rows[0][0])
        for r in rows[1:]:
            out.write(" ".join(r[:5]) + "\n")
    print("%d surface triangles, %s nodes, %s tets -> %s.node/.ele"
          % (len(tris), nodes[0].split()[0], eles[0].split()[0], OUT))


if __name__ == "__main__":
    sys.exit(main())
