"""Building worlds from Python and from scene files; definitions; errors."""

import copy
import pickle

import numpy as np
import pytest

import mabd
from conftest import build_pendulum, pendulum_defs, scene


def test_python_pendulum_matches_scene_file_bit_for_bit():
    from_file = mabd.World.from_scene(scene("scenes/pendulum.json"))
    from_python = build_pendulum()
    assert from_file.settings.dt == from_python.settings.dt
    for _ in range(3):
        from_file.step(100)
        from_python.step(100)
        assert np.array_equal(from_file.q, from_python.q)
        assert np.array_equal(from_file.qdot, from_python.qdot)
    assert from_file.joint_position("pivot") == from_python.joint_position(0)
    # The rod has swung: a comparison of two unchanged worlds would prove nothing.
    assert from_python.joint_position(0) > 0.4


def test_world_settings_keywords_and_object():
    s = mabd.WorldSettings(dt=2e-3, newton_iterations=3)
    s.contact.model = mabd.ContactModel.Penalty  # nested structs are edited in place
    w = mabd.World(s, gravity=(0, 0, -1.62))
    assert w.dt == 2e-3
    assert w.settings.newton_iterations == 3
    assert w.settings.contact.model == mabd.ContactModel.Penalty
    np.testing.assert_array_equal(w.settings.gravity, [0, 0, -1.62])
    with pytest.raises(TypeError, match="unknown setting 'dtt'"):
        mabd.World(dtt=1e-3)


def test_definitions_pickle_and_copy():
    rod, pivot = pendulum_defs()
    pivot.limits = mabd.JointLimits(lower=-1, upper=2)
    pivot.drive = mabd.JointDrive(mode=mabd.DriveMode.Velocity, target=0.5, damping=3)
    for d in (rod, pivot, mabd.WorldSettings(dt=5e-4)):
        back = pickle.loads(pickle.dumps(d))
        assert repr(back) == repr(d)
        assert repr(copy.deepcopy(d)) == repr(d)
    assert pickle.loads(pickle.dumps(pivot)).drive.target == 0.5
    assert "density=7850.0" in repr(rod)


def test_unknown_definition_field_is_a_type_error():
    with pytest.raises(TypeError, match="Material\\(\\): unknown field 'densty'"):
        mabd.Material(densty=3)


def test_bad_body_raises_value_error_naming_body_and_field():
    w = mabd.World()
    bad = mabd.BodyDef(name="wheel", shape=mabd.ShapeDef.sphere(-0.1))
    with pytest.raises(ValueError, match=r"body 'wheel'.*radius"):
        w.add_body(bad)
    assert isinstance(pytest.raises(mabd.InvalidArgument, w.add_body, bad).value, mabd.Error)
    assert w.body_count == 0  # nothing added for a rejected body


def test_bad_joint_raises_value_error_naming_joint():
    w = mabd.World()
    w.add_body(pendulum_defs()[0])
    j = mabd.JointDef(name="elbow", type=mabd.JointType.Hinge, body_a=0, body_b=7)
    with pytest.raises(ValueError, match="elbow"):
        w.add_joint(j)
    j = mabd.JointDef(name="elbow", type=mabd.JointType.Hinge, body_a=None, body_b=0,
                      axis=(0, 0, 0))
    with pytest.raises(ValueError, match=r"elbow.*axis"):
        w.add_joint(j)
    assert w.joint_count == 0


def test_bad_references_name_the_item():
    w = build_pendulum()
    with pytest.raises(ValueError, match="unknown body id 3"):
        w.pose(3)
    with pytest.raises(ValueError, match="no body named 'bob'"):
        w.pose("bob")
    with pytest.raises(ValueError, match="no joint named 'knee'"):
        w.joint_position("knee")
    with pytest.raises(ValueError, match="step: n must be >= 0"):
        w.step(-1)
    with pytest.raises(ValueError, match=r"TriangleMesh.vertices: expected an \(n, 3\) array"):
        mabd.ShapeDef.mesh_from(np.zeros((4, 2)), [[0, 1, 2]])
    with pytest.raises(ValueError, match="apply_wrench"):
        w.apply_wrench(0, force=(np.nan, 0, 0))


def test_scene_errors_name_file_and_item(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"bodies": [{"name": "rod", "shape": {"type": "box", "size": [1, -1, 1]}}]}')
    with pytest.raises(mabd.SceneError, match=r"bad.json.*bodies\[0\] 'rod'.*size"):
        mabd.World.from_scene(str(bad))
    with pytest.raises(ValueError, match="missing.json"):
        mabd.load_scene(str(tmp_path / "missing.json"))


def test_scene_world_facts():
    w = mabd.World.from_scene(scene("tests/data/good/contact.json"))
    assert w.scene_path.endswith("contact.json")
    assert w.body_names[:3] == ["ground", "bowl", "dumbbell"]
    assert w.body_info("ground").kind == mabd.BodyKind.Static
    assert w.find_body("paddle") == 5
    assert w.find_body("nobody") is None
    rod = build_pendulum().body_info(0)
    assert rod.mass == pytest.approx(1.0, rel=1e-12)
    # A 1 m x 2 cm x 2 cm box of 1 kg about its short axes: m (1 + 0.02^2) / 12.
    assert rod.principal_inertia.max() == pytest.approx((1 + 0.02**2) / 12, rel=1e-9)


def test_mass_properties_match_closed_form():
    mp = mabd.compute_mass_properties(mabd.ShapeDef.sphere(0.5), 1000.0)
    assert mp.volume == pytest.approx(4 / 3 * np.pi * 0.125, rel=1e-12)
    assert mp.mass == pytest.approx(1000 * mp.volume, rel=1e-12)
    # A cube mesh of side 2: volume 8, second moment 8 * 1/3 per axis at density 1.
    v = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    t = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
         [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    mp = mabd.compute_mass_properties(mabd.ShapeDef.mesh_from(v, t), 1.0)
    assert mp.volume == pytest.approx(8.0, rel=1e-12)
    np.testing.assert_allclose(np.diag(mp.second_moment), [8 / 3] * 3, rtol=1e-12)


def test_bad_motion_function_result_names_the_field():
    w = mabd.World()
    lift = mabd.BodyDef(name="lift", kind=mabd.BodyKind.Kinematic,
                        shape=mabd.ShapeDef.box((1, 1, 0.1)), motion=lambda t: 3)
    with pytest.raises(ValueError, match=r"BodyDef.motion: f\(0.000000\) must return a Pose"):
        w.add_body(lift)
    with pytest.raises(ValueError, match="BodyDef.motion: expected a callable"):
        lift.motion = 3
