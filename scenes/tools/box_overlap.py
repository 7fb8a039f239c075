#!/usr/bin/python3
"""Steps a scene and measures, after every step, the true overlap of its box bodies.

The stats' max_penetration is each contact row's linearised gap: a pair the rows do not see
(no row, or a row on other points) does not show there. This measures the shapes instead:
for every two boxes within reach of each other (jointed pairs excluded), the overlap is the
least overlap over the 15 separating-axis candidates (face normals of both boxes and the
crossings of their edges), in metres, at the bodies' poses (World.positions and
World.orientations). It prints the deepest pair every 10 steps, then the deepest steps, the
mean over the second half of the run of each step's deepest, and the step stats.

  /usr/bin/python3 scenes/tools/box_overlap.py scenes/falling_joints.json \
      --module build/python --steps 300

Set OMP_NUM_THREADS=1 for the single-thread figures.
"""
import argparse
import json
import sys
import time

import numpy as np


def rotations(quats):
    """(n, 3, 3) rotation matrices of (n, 4) unit quaternions (w, x, y, z)."""
    w, x, y, z = quats.T
    r = np.empty((len(quats), 3, 3))
    r[:, 0, 0] = 1 - 2 * (y * y + z * z)
    r[:, 0, 1] = 2 * (x * y - w * z)
    r[:, 0, 2] = 2 * (x * z + w * y)
    r[:, 1, 0] = 2 * (x * y + w * z)
    r[:, 1, 1] = 1 - 2 * (x * x + z * z)
    r[:, 1, 2] = 2 * (y * z - w * x)
    r[:, 2, 0] = 2 * (x * z - w * y)
    r[:, 2, 1] = 2 * (y * z + w * x)
    r[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def deepest_pair(pos, rot, half, excluded):
    """The largest overlap (m, negative when all are apart) and its pair (indices)."""
    reach = 2 * np.linalg.norm(half, axis=1).max()
    d = np.linalg.norm(pos[:, None, :] - pos[None, :, :], axis=2)
    i, j = np.nonzero(np.triu(d < reach, 1))
    keep = np.array([(a, b) not in excluded for a, b in zip(i, j)], dtype=bool)
    i, j = i[keep], j[keep]
    if len(i) == 0:
        return -np.inf, None
    ri, rj, t = rot[i], rot[j], pos[j] - pos[i]
    axes = [ri[:, :, k] for k in range(3)] + [rj[:, :, k] for k in range(3)]
    for a in range(3):
        for b in range(3):
            c = np.cross(ri[:, :, a], rj[:, :, b])
            norm = np.linalg.norm(c, axis=1, keepdims=True)
            axes.append(np.where(norm > 1e-9, c / np.maximum(norm, 1e-300), ri[:, :, a]))
    overlap = np.full(len(i), np.inf)
    for u in axes:
        ext_i = np.einsum('pl,pl->p', np.abs(np.einsum('pk,pkl->pl', u, ri)), half[i])
        ext_j = np.einsum('pl,pl->p', np.abs(np.einsum('pk,pkl->pl', u, rj)), half[j])
        overlap = np.minimum(overlap, ext_i + ext_j - np.abs(np.einsum('pk,pk->p', u, t)))
    k = int(np.argmax(overlap))
    return overlap[k], (int(i[k]), int(j[k]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('scene')
    parser.add_argument('--module', default='build/python', help='directory of the mabd package')
    parser.add_argument('--steps', type=int, default=None, help='default: the scene\'s')
    args = parser.parse_args()
    sys.path.insert(0, args.module)
    import mabd  # noqa: E402

    try:
        with open(args.scene) as f:
            scene = json.load(f)
        world = mabd.load_scene(args.scene)
    except (OSError, ValueError, RuntimeError) as e:
        sys.exit(f'{args.scene}: {e}')
    boxes, half = [], []
    for body in scene['bodies']:
        if body.get('shape', {}).get('type') == 'box':
            boxes.append(world.find_body(body['name']))
            half.append(0.5 * np.array(body['shape']['size'], dtype=float))
    if not boxes:
        sys.exit(f'{args.scene}: no box bodies')
    boxes, half = np.array(boxes), np.array(half)
    slot = {int(b): k for k, b in enumerate(boxes)}
    excluded = set()
    for joint in scene.get('joints', []):
        ends = [world.find_body(name) for name in joint.get('bodies', [])]
        if len(ends) == 2 and all(e in slot for e in ends):
            a, b = sorted(slot[e] for e in ends)
            excluded.add((a, b))
    steps = args.steps if args.steps is not None else world.default_steps
    deepest, stats = [], []
    start = time.time()
    for s in range(1, steps + 1):
        world.step(1)
        pos, quat = world.positions()[boxes], world.orientations()[boxes]
        overlap, pair = deepest_pair(pos, rotations(quat), half, excluded)
        deepest.append((overlap, s, None if pair is None else tuple(int(boxes[p]) for p in pair)))
        st = world.last_step
        stats.append((st.wall_ms, st.newton_iterations, st.contact_ms, st.detect_ms,
                      world.kinetic_energy() + world.potential_energy()))
        if s % 10 == 0:
            worst = max(deepest[-10:], key=lambda x: x[0])
            print(f'steps {s - 9}-{s}: deepest {100 * max(worst[0], 0):.2f} cm (step {worst[1]}, '
                  f'bodies {worst[2]})', flush=True)
    top = sorted(deepest, key=lambda x: -x[0])[:8]
    print('deepest steps:', ', '.join(f'{100 * o:.2f} cm at {s} {p}' for o, s, p in top))
    half_run = [max(o, 0) for o, _, _ in deepest[steps // 2:]]
    print(f'mean of each step\'s deepest over steps {steps // 2 + 1}-{steps}: '
          f'{100 * np.mean(half_run):.3f} cm; at the end {100 * max(deepest[-1][0], 0):.3f} cm')
    a = np.array(stats)
    rises = np.diff(a[:, 4])
    print(f'ms/step mean {a[:, 0].mean():.1f}, median {np.median(a[:, 0]):.1f}; Newton iterations '
          f'{a[:, 1].mean():.2f} (max {int(a[:, 1].max())}); contact {a[:, 2].mean():.1f} ms, '
          f'detection {a[:, 3].mean():.1f} ms; energy (kinetic + potential) rises on '
          f'{int((rises > 0).sum())} steps, largest {max(rises.max(), 0):.3g} J; '
          f'{time.time() - start:.0f} s in all')


if __name__ == '__main__':
    main()
