# Generates models/panda.urdf from the published parameters (see its header comment):
#   python3 models/tools/panda_urdf.py > models/panda.urdf
import math
pi = math.pi
# Modified DH (Craig) of the Franka Emika Panda: (a_{i-1}, d_i, alpha_{i-1}) per joint.
mdh = [(0, 0.333, 0), (0, 0, -pi/2), (0, 0.316, pi/2), (0.0825, 0, pi/2),
       (-0.0825, 0.384, -pi/2), (0, 0, pi/2), (0.088, 0, pi/2)]
limits = [(-2.8973, 2.8973), (-1.7628, 1.7628), (-2.8973, 2.8973), (-3.0718, -0.0698),
          (-2.8973, 2.8973), (-0.0175, 3.7525), (-2.8973, 2.8973)]
effort = [87, 87, 87, 87, 12, 12, 12]
velocity = [2.1750, 2.1750, 2.1750, 2.1750, 2.6100, 2.6100, 2.6100]
# Gaz et al. 2019: mass (kg), COM (m), inertia about the COM in the link frame
# (ixx, iyy, izz, ixy, ixz, iyz) (kg m^2).
inertials = [
    (4.970684, (3.875e-03, 2.081e-03, -4.762e-02), (7.0337e-01, 7.0661e-01, 9.1170e-03, -1.3900e-04, 6.7720e-03, 1.9169e-02)),
    (0.646926, (-3.141e-03, -2.872e-02, 3.495e-03), (7.9620e-03, 2.8110e-02, 2.5995e-02, -3.9250e-03, 1.0254e-02, 7.0400e-04)),
    (3.228604, (2.7518e-02, 3.9252e-02, -6.6502e-02), (3.7242e-02, 3.6155e-02, 1.0830e-02, -4.7610e-03, -1.1396e-02, -1.2805e-02)),
    (3.587895, (-5.317e-02, 1.04419e-01, 2.7454e-02), (2.5853e-02, 1.9552e-02, 2.8323e-02, 7.7960e-03, -1.3320e-03, 8.6410e-03)),
    (1.225946, (-1.1953e-02, 4.1065e-02, -3.8437e-02), (3.5549e-02, 2.9474e-02, 8.6270e-03, -2.1170e-03, -4.0370e-03, 2.2900e-04)),
    (1.666555, (6.0149e-02, -1.4117e-02, -1.0517e-02), (1.9640e-03, 4.3540e-03, 5.4330e-03, 1.0900e-04, -1.1580e-03, 3.4100e-04)),
    (7.35522e-01, (1.0517e-02, -4.252e-03, 6.1597e-02), (1.2516e-02, 1.0027e-02, 4.8150e-03, -4.2800e-04, -1.1960e-03, -7.4100e-04)),
]
# Collision primitives per link (link frame): (kind, origin xyz, rpy, dims).
coll = {
    0: [("cylinder", (0, 0, 0.07), (0, 0, 0), (0.07, 0.14))],
    1: [("cylinder", (0, 0, -0.1), (0, 0, 0), (0.06, 0.2))],
    2: [("cylinder", (0, -0.1, 0), (pi/2, 0, 0), (0.06, 0.2))],
    3: [("cylinder", (0, 0, -0.1), (0, 0, 0), (0.06, 0.2)), ("sphere", (0.0825, 0, 0), (0, 0, 0), (0.06,))],
    4: [("cylinder", (-0.0825, 0.1, 0), (pi/2, 0, 0), (0.06, 0.2)), ("sphere", (0, 0, 0), (0, 0, 0), (0.06,))],
    5: [("cylinder", (0, 0.03, -0.13), (0, 0, 0), (0.05, 0.22))],
    6: [("cylinder", (0.044, 0, 0), (0, pi/2, 0), (0.05, 0.088)), ("sphere", (0, 0, 0), (0, 0, 0), (0.05,))],
    7: [("cylinder", (0, 0, 0.05), (0, 0, 0), (0.045, 0.1))],
}
def f(x): return repr(float(x)) if abs(x) > 1e-15 else "0"  # shortest round-trip form
def v(t): return " ".join(f(x) for x in t)
def geom(kind, dims):
    if kind == "cylinder": return f'<cylinder radius="{f(dims[0])}" length="{f(dims[1])}"/>'
    if kind == "sphere": return f'<sphere radius="{f(dims[0])}"/>'
    return f'<box size="{v(dims)}"/>'
def collisions(i, ind="    "):
    out = []
    for kind, xyz, rpy, dims in coll.get(i, []):
        out.append(f'{ind}<collision>\n{ind}  <origin xyz="{v(xyz)}" rpy="{v(rpy)}"/>\n'
                   f'{ind}  <geometry>{geom(kind, dims)}</geometry>\n{ind}</collision>')
    return "\n".join(out)
def inertial(m, com, I, ind="    "):
    ixx, iyy, izz, ixy, ixz, iyz = I
    return (f'{ind}<inertial>\n{ind}  <origin xyz="{v(com)}" rpy="0 0 0"/>\n{ind}  <mass value="{f(m)}"/>\n'
            f'{ind}  <inertia ixx="{f(ixx)}" ixy="{f(ixy)}" ixz="{f(ixz)}" iyy="{f(iyy)}" iyz="{f(iyz)}" izz="{f(izz)}"/>\n{ind}</inertial>')
L = []
L.append('<?xml version="1.0"?>')
L.append('''<!--
  A Franka Emika Panda-like arm with a parallel two-finger gripper, written for mabd from
  published parameters:
  - kinematics: the modified Denavit-Hartenberg table of the Franka Control Interface
    documentation ("Robot and interface specifications", frankaemika.github.io/docs), joint i's
    origin = Rot_x(alpha_{i-1}) Trans_x(a_{i-1}) Trans_z(d_i), axis z; flange d = 0.107 m;
  - joint position limits (rad), velocity limits (rad/s) and torque limits (N m): same source;
  - link masses, centres of mass and inertia tensors of links 1-7: C. Gaz, M. Cognetti,
    A. Oliva, P. Robuffo Giordano, A. De Luca, "Dynamic Identification of the Franka Emika
    Panda Robot With Retrieval of Feasible Parameters Using Penalty-Based Optimization",
    IEEE Robotics and Automation Letters 4(4), 2019 (their identified parameter set, as the
    frankaemika franka_description package also lists it); the base is welded to the world,
    its inertial (franka_description's) has no effect;
  - hand: 0.73 kg, the gripper's datasheet mass; fingers 0.015 kg each, stroke 0 to 0.04 m each
    (0.08 m opening), 20 N continuous force (datasheet). Hand and finger inertias are those of
    solid boxes of their collision size and mass.
  Geometry is primitive (cylinders, spheres, boxes) of roughly the arm's size: it is for
  contact, not an exact shape. The base (panda_link0) is welded to the world.
-->''')
L.append('<robot name="panda">')
L.append('  <link name="panda_link0">')
L.append(inertial(0.629769, (-4.1018e-02, -1.4e-04, 4.9974e-02), (3.15e-03, 3.88e-03, 4.285e-03, 8.2904e-07, 1.5e-04, 8.2299e-06)))
L.append(collisions(0))
L.append('  </link>')
for i in range(7):
    a, d, al = mdh[i]
    xyz = (a, -d * math.sin(al), d * math.cos(al))
    L.append(f'  <joint name="panda_joint{i+1}" type="revolute">')
    L.append(f'    <parent link="panda_link{i}"/>\n    <child link="panda_link{i+1}"/>')
    L.append(f'    <origin xyz="{v(xyz)}" rpy="{v((al, 0, 0))}"/>\n    <axis xyz="0 0 1"/>')
    L.append(f'    <limit lower="{limits[i][0]}" upper="{limits[i][1]}" effort="{effort[i]}" velocity="{velocity[i]}"/>')
    L.append('  </joint>')
    m, com, I = inertials[i]
    L.append(f'  <link name="panda_link{i+1}">')
    L.append(inertial(m, com, I))
    L.append(collisions(i + 1))
    L.append('  </link>')
# Flange (fixed) and hand: hand frame rotated -45 deg about z (the gripper's mounting).
def box_inertia(m, s):
    x, y, z = s
    return (m*(y*y+z*z)/12, m*(x*x+z*z)/12, m*(x*x+y*y)/12, 0, 0, 0)
L.append('  <joint name="panda_hand_joint" type="fixed">\n    <parent link="panda_link7"/>\n    <child link="panda_hand"/>')
L.append(f'    <origin xyz="0 0 0.107" rpy="0 0 {f(-pi/4)}"/>\n  </joint>')
hand = (0.06, 0.2, 0.065)
L.append('  <link name="panda_hand">')
L.append(inertial(0.73, (0, 0, 0.0325), box_inertia(0.73, hand)))
L.append(f'    <collision>\n      <origin xyz="0 0 0.0325" rpy="0 0 0"/>\n      <geometry><box size="{v(hand)}"/></geometry>\n    </collision>')
L.append('  </link>')
finger = (0.02, 0.015, 0.05)
for side, sgn in (("left", 1), ("right", -1)):
    L.append(f'  <joint name="panda_finger_joint_{side}" type="prismatic">')
    L.append(f'    <parent link="panda_hand"/>\n    <child link="panda_finger_{side}"/>')
    L.append(f'    <origin xyz="0 0 0.0584" rpy="0 0 0"/>\n    <axis xyz="0 {sgn} 0"/>')
    L.append('    <limit lower="0" upper="0.04" effort="20" velocity="0.2"/>')
    L.append('  </joint>')
    L.append(f'  <link name="panda_finger_{side}">')
    L.append(inertial(0.015, (0, sgn * 0.0075, 0.025), box_inertia(0.015, finger)))
    L.append(f'    <collision>\n      <origin xyz="0 {f(sgn*0.0075)} 0.025" rpy="0 0 0"/>\n      <geometry><box size="{v(finger)}"/></geometry>\n    </collision>')
    L.append('  </link>')
L.append('</robot>')
print("\n".join(L))
