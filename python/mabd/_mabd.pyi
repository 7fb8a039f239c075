"""Type stubs of the extension module mabd._mabd (SI units; quaternions (w, x, y, z))."""

from __future__ import annotations

import enum
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Vec3 = Union[Sequence[float], npt.NDArray[np.float64]]
_Quat = Union[Sequence[float], npt.NDArray[np.float64]]
_Vec12 = Union[Sequence[float], npt.NDArray[np.float64]]
_Array = npt.NDArray[np.float64]
_Ref = Union[int, str]  # a body or joint: its id or its name

class Error(RuntimeError): ...
class InvalidArgument(Error, ValueError): ...
class SceneError(Error, ValueError): ...
class SimulationError(Error): ...

class ShapeType(enum.Enum):
    Box = 0
    Sphere = 1
    Capsule = 2
    Cylinder = 3
    Mesh = 4
    Plane = 5

class BodyKind(enum.Enum):
    Dynamic = 0
    Static = 1
    Kinematic = 2

class JointType(enum.Enum):
    Ball = 0
    Hinge = 1
    Universal = 2
    Prismatic = 3
    Fixed = 4

class DriveMode(enum.Enum):
    Position = 0
    Velocity = 1

class RotationMode(enum.Enum):
    Polar = 0
    Normalized = 1

class IntegratorMode(enum.Enum):
    CoRotated = 0
    Vanilla = 1

class TimeIntegration(enum.Enum):
    GeneralizedAlpha = 0
    ImplicitEuler = 1

class DualSolverKind(enum.Enum):
    Auto = 0
    Sparse = 1
    Chain = 2
    Tree = 3
    Iterative = 4

class ContactModel(enum.Enum):
    None_ = 0
    Penalty = 1
    Exact = 2

class Pose:
    position: _Array  # m, world
    orientation: _Array  # (w, x, y, z)
    def __init__(self, *, position: _Vec3 = ..., orientation: _Quat = ...) -> None: ...

class TriangleMesh:
    vertices: _Array  # (n, 3) m
    triangles: npt.NDArray[np.int64]  # (m, 3)
    def __init__(self, *, vertices: Any = ..., triangles: Any = ...) -> None: ...

class ShapeDef:
    type: ShapeType
    size: _Array  # box full extents (m)
    radius: float  # m
    length: float  # m
    mesh: TriangleMesh
    mesh_file: str
    def __init__(self, *, type: ShapeType = ..., size: _Vec3 = ..., radius: float = ...,
                 length: float = ..., mesh: TriangleMesh = ..., mesh_file: str = ...) -> None: ...
    @staticmethod
    def box(size: _Vec3) -> ShapeDef: ...
    @staticmethod
    def sphere(radius: float) -> ShapeDef: ...
    @staticmethod
    def capsule(radius: float, length: float) -> ShapeDef: ...
    @staticmethod
    def cylinder(radius: float, length: float) -> ShapeDef: ...
    @staticmethod
    def plane() -> ShapeDef: ...
    @staticmethod
    def mesh_from(vertices: Any, triangles: Any) -> ShapeDef: ...
    @staticmethod
    def obj(path: str) -> ShapeDef: ...

class Material:
    density: float  # kg/m^3
    youngs_modulus: float  # Pa
    poisson_ratio: float
    friction: float
    def __init__(self, *, density: float = ..., youngs_modulus: float = ...,
                 poisson_ratio: float = ..., friction: float = ...) -> None: ...

class CollisionPrimitive:
    shape: ShapeDef
    pose: Pose
    def __init__(self, *, shape: ShapeDef = ..., pose: Pose = ...) -> None: ...

class CollisionDef:
    enabled: bool
    primitives: List[CollisionPrimitive]
    group: int
    mask: int
    def __init__(self, *, enabled: bool = ..., primitives: List[CollisionPrimitive] = ...,
                 group: int = ..., mask: int = ...) -> None: ...

_Motion = Callable[[float], Union[Pose, Tuple[_Vec3, _Quat]]]

class BodyDef:
    name: str
    shape: ShapeDef
    material: Material
    mass: Optional[float]  # kg
    position: _Array  # m
    orientation: _Array  # (w, x, y, z)
    linear_velocity: _Array  # m/s
    angular_velocity: _Array  # rad/s
    kind: BodyKind
    motion: Optional[_Motion]
    collision: CollisionDef
    def __init__(self, *, name: str = ..., shape: ShapeDef = ..., material: Material = ...,
                 mass: Optional[float] = ..., position: _Vec3 = ..., orientation: _Quat = ...,
                 linear_velocity: _Vec3 = ..., angular_velocity: _Vec3 = ...,
                 kind: BodyKind = ..., motion: Optional[_Motion] = ...,
                 collision: CollisionDef = ...) -> None: ...

class MassProperties:
    volume: float
    mass: float
    com: _Array
    second_moment: _Array
    principal_axes: _Array
    principal_second_moment: _Array

class BodyInfo:
    name: str
    kind: BodyKind
    mass: float
    volume: float
    principal_inertia: _Array
    size: float

def compute_mass_properties(shape: ShapeDef, density: float) -> MassProperties: ...
def validate_shape(shape: ShapeDef, collider_only: bool = ...) -> None: ...
def load_obj(path: str) -> TriangleMesh: ...

class JointLimits:
    lower: float
    upper: float
    def __init__(self, *, lower: float = ..., upper: float = ...) -> None: ...

class ConeLimits:
    swing: float
    twist_lower: Optional[float]
    twist_upper: Optional[float]
    def __init__(self, *, swing: float = ..., twist_lower: Optional[float] = ...,
                 twist_upper: Optional[float] = ...) -> None: ...

class JointSpring:
    stiffness: float
    damping: float
    rest: float
    def __init__(self, *, stiffness: float = ..., damping: float = ...,
                 rest: float = ...) -> None: ...

class JointDrive:
    mode: DriveMode
    target: float
    stiffness: float
    damping: float
    max_force: float
    def __init__(self, *, mode: DriveMode = ..., target: float = ..., stiffness: float = ...,
                 damping: float = ..., max_force: float = ...) -> None: ...

class JointDef:
    name: str
    type: JointType
    body_a: Optional[int]  # None: the world
    body_b: Optional[int]
    anchor: _Array  # m, world
    axis: _Array
    axes: List[_Array]
    limits: Optional[JointLimits]
    cone: Optional[ConeLimits]
    spring: Optional[JointSpring]
    drive: Optional[JointDrive]
    compliance: float  # m/N
    def __init__(self, *, name: str = ..., type: JointType = ..., body_a: Optional[int] = ...,
                 body_b: Optional[int] = ..., anchor: _Vec3 = ..., axis: _Vec3 = ...,
                 axes: Sequence[_Vec3] = ..., limits: Optional[JointLimits] = ...,
                 cone: Optional[ConeLimits] = ..., spring: Optional[JointSpring] = ...,
                 drive: Optional[JointDrive] = ..., compliance: float = ...) -> None: ...

class JointWrench:
    force: _Array  # N
    torque: _Array  # N m

class JointCoordinates:
    dofs: int
    position: List[float]
    velocity: List[float]
    rotation: _Array
    angular_velocity: _Array

class Wind:
    velocity: _Array
    density: float
    drag_coefficient: float
    gust: float
    gust_period: float
    def __init__(self, **fields: Any) -> None: ...

class ContactSettings:
    model: ContactModel
    time_constant: float
    damping_ratio: float
    margin: float
    friction: bool
    def __init__(self, **fields: Any) -> None: ...

class WorldSettings:
    dt: float
    gravity: _Array
    newton_iterations: int
    tolerance: float
    rotation: RotationMode
    integrator: IntegratorMode
    time_integration: TimeIntegration
    spectral_radius: float
    solver: DualSolverKind
    dual_tolerance: float
    dual_max_iterations: int
    wind: Wind
    contact: ContactSettings
    def __init__(self, **fields: Any) -> None: ...

def validate_settings(settings: WorldSettings) -> None: ...

class StepStats:
    newton_iterations: int
    residual: float
    wall_ms: float
    joint_residual: float
    solver: str
    dual_iterations: int
    dual_residual: float
    contacts: int
    max_penetration: float
    detect_ms: float
    body_ms: float
    dual_ms: float

class ComponentSummary:
    kind: str
    bodies: int
    joints: int
    rows: int
    loops: int
    solver: str

class World:
    def __init__(self, settings: Optional[WorldSettings] = ..., **overrides: Any) -> None: ...
    @staticmethod
    def from_scene(path: str) -> World: ...
    @staticmethod
    def from_json(text: str, name: str = ..., base_dir: str = ...) -> World: ...
    def add_body(self, body_def: BodyDef) -> int: ...
    def add_joint(self, joint_def: JointDef) -> int: ...
    def exclude_collision(self, a: _Ref, b: _Ref) -> None: ...
    def reserve(self, bodies: int, joints: int) -> None: ...
    def step(self, n: int = ...) -> None: ...
    @property
    def settings(self) -> WorldSettings: ...
    @property
    def dt(self) -> float: ...
    @property
    def time(self) -> float: ...
    @property
    def step_count(self) -> int: ...
    @property
    def body_count(self) -> int: ...
    @property
    def joint_count(self) -> int: ...
    @property
    def constraint_rows(self) -> int: ...
    @property
    def last_step(self) -> StepStats: ...
    @property
    def warnings(self) -> List[str]: ...
    @property
    def body_names(self) -> List[str]: ...
    @property
    def scene_path(self) -> Optional[str]: ...
    @property
    def default_steps(self) -> int: ...
    @property
    def scene_warnings(self) -> List[str]: ...
    def topology(self) -> List[ComponentSummary]: ...
    def factor_count(self) -> int: ...
    def body_info(self, body: _Ref) -> BodyInfo: ...
    def find_body(self, name: str) -> Optional[int]: ...
    def find_joint(self, name: str) -> Optional[int]: ...
    def joint_name(self, joint: _Ref) -> str: ...
    # per body (world frame, SI)
    def pose(self, body: _Ref) -> Pose: ...
    def com_position(self, body: _Ref) -> _Array: ...
    def twist(self, body: _Ref) -> Tuple[_Array, _Array]: ...
    def affine_matrix(self, body: _Ref) -> _Array: ...
    def coordinates(self, body: _Ref) -> _Array: ...
    def velocities(self, body: _Ref) -> _Array: ...
    def rigidity_deviation(self, body: _Ref) -> float: ...
    def elastic_energy(self, body: _Ref) -> float: ...
    def kinetic_energy(self, body: Optional[_Ref] = ...) -> float: ...
    def potential_energy(self, body: Optional[_Ref] = ...) -> float: ...
    def linear_momentum(self, body: Optional[_Ref] = ...) -> _Array: ...
    def angular_momentum(self, body: Optional[_Ref] = ...) -> _Array: ...
    # all bodies (copies)
    def positions(self) -> _Array: ...
    def orientations(self) -> _Array: ...
    def com_positions(self) -> _Array: ...
    def linear_velocities(self) -> _Array: ...
    def angular_velocities(self) -> _Array: ...
    # views of the world's storage (read-only; see the class docstring)
    @property
    def q(self) -> _Array: ...
    @property
    def qdot(self) -> _Array: ...
    @property
    def view_count(self) -> int: ...
    # inputs
    def apply_wrench(self, body: _Ref, force: _Vec3 = ..., torque: _Vec3 = ...) -> None: ...
    def apply_force_at(self, body: _Ref, force: _Vec3, point: _Vec3) -> None: ...
    def set_kinematic_target(self, body: _Ref, position: _Vec3,
                             orientation: _Quat = ...) -> None: ...
    # joints
    def joint_wrench(self, joint: _Ref) -> JointWrench: ...
    def joint_residual(self, joint: _Ref) -> float: ...
    def joint_position(self, joint: _Ref) -> float: ...
    def joint_velocity(self, joint: _Ref) -> float: ...
    def joint_coordinates(self, joint: _Ref) -> JointCoordinates: ...
    def joint_states(self) -> Dict[str, npt.NDArray[Any]]: ...
    def joint_wrenches(self) -> Tuple[_Array, _Array]: ...
    def set_drive_target(self, joint: _Ref, target: float) -> None: ...
    def set_drive_gains(self, joint: _Ref, stiffness: float, damping: float,
                        max_force: float = ...) -> None: ...
    def set_drive(self, joint: _Ref, drive: Optional[JointDrive]) -> None: ...
    def set_joint_limits(self, joint: _Ref, limits: Optional[JointLimits]) -> None: ...
    def set_joint_spring(self, joint: _Ref, spring: Optional[JointSpring]) -> None: ...
    def joint_drive(self, joint: _Ref) -> Optional[JointDrive]: ...
    def joint_limits(self, joint: _Ref) -> Optional[JointLimits]: ...
    def joint_spring(self, joint: _Ref) -> Optional[JointSpring]: ...
    # contact
    def contacts(self) -> Dict[str, npt.NDArray[Any]]: ...
    # state
    def save_state(self) -> bytes: ...
    def restore_state(self, state: bytes) -> None: ...
    def set_body_state(self, body: _Ref, q: Optional[_Vec12] = ...,
                       qdot: Optional[_Vec12] = ...) -> None: ...
    def set_state_arrays(self, q: Optional[_Array] = ..., qdot: Optional[_Array] = ...) -> None: ...
    def write_checkpoint(self, path: str) -> None: ...
    def read_checkpoint(self, path: str) -> None: ...
    def clone(self) -> World: ...
    def __copy__(self) -> World: ...
    def __deepcopy__(self, memo: Any) -> World: ...
    def __getstate__(self) -> tuple: ...
    def __setstate__(self, state: tuple) -> None: ...

def load_scene(path: str) -> World: ...

class Recorder:
    def __init__(self, world: World, max_bodies: int = ...) -> None: ...
    def record(self) -> None: ...
    def reserve(self, frames: int) -> None: ...
    @property
    def frame_count(self) -> int: ...
    @property
    def body_count(self) -> int: ...
    def write_glb(self, path: str) -> None: ...
    def to_glb(self) -> bytes: ...

def default_frame_every(dt: float) -> int: ...
