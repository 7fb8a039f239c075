"""glTF export of a run and the viewer page."""

import base64
import json
import os
import struct
import subprocess
import sys

import pytest

import mabd
from conftest import build_pendulum, scene


def read_glb(data: bytes):
    magic, version, length = struct.unpack_from("<4sII", data, 0)
    assert magic == b"glTF" and version == 2 and length == len(data)
    chunk_length, chunk_type = struct.unpack_from("<II", data, 12)
    assert chunk_type == 0x4E4F534A  # "JSON"
    return json.loads(data[20:20 + chunk_length])


def test_record_run_writes_one_node_per_body_and_every_frame(tmp_path):
    w = mabd.World.from_scene(scene("tests/data/good/contact.json"))
    path = tmp_path / "run.glb"
    recorder = mabd.record_run(w, 25, str(path), frame_every=10)
    assert w.step_count == 25
    assert recorder.frame_count == 4  # t = 0, 10, 20 and 25 steps
    doc = read_glb(path.read_bytes())
    names = [node.get("name") for node in doc["nodes"]]
    for body in w.body_names:
        assert body in names
    assert len(doc["animations"]) == 1
    times = doc["accessors"][doc["animations"][0]["samplers"][0]["input"]]
    assert times["count"] == 4
    assert times["max"][0] == pytest.approx(w.time, rel=1e-6)
    assert recorder.to_glb() == path.read_bytes()


def test_recorder_frames_follow_the_world(tmp_path):
    w = build_pendulum()
    recorder = mabd.Recorder(w)
    for _ in range(3):
        recorder.record()
        w.step(5)
    assert (recorder.frame_count, recorder.body_count) == (3, 1)
    with pytest.raises(ValueError, match="frame_every"):
        mabd.record_run(w, 10, str(tmp_path / "x.glb"), frame_every=0)


def test_viewer_page_embeds_the_run(tmp_path):
    w = build_pendulum()
    glb = tmp_path / "pendulum.glb"
    mabd.record_run(w, 60, str(glb))
    try:
        page = mabd.write_viewer(str(glb))
    except RuntimeError as e:
        if "without the web viewer bundle" in str(e):
            pytest.skip("this build has no viewer bundle (npm missing)")
        raise
    assert page == str(tmp_path / "pendulum.html")
    html = (tmp_path / "pendulum.html").read_text()
    assert base64.b64encode(glb.read_bytes()).decode() in html
    with pytest.raises(RuntimeError, match="missing.glb"):
        mabd.write_viewer(str(tmp_path / "missing.glb"))


@pytest.mark.skipif(os.environ.get("MABD_INSTALL_RULES") != "1",
                    reason="run by ctest in a build with install rules")
def test_installed_package_imports_and_finds_the_program(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", os.environ["MABD_BUILD_DIR"], "--component",
                    "mabd_python", "--prefix", str(prefix)], check=True, capture_output=True)
    site = prefix / "lib" / "python3" / "dist-packages"
    code = ("import mabd, mabd._paths as p; "
            "w = mabd.World.from_scene(%r); w.step(3); print(mabd.__file__); print(p.PROGRAM)"
            % scene("scenes/pendulum.json"))
    env = dict(os.environ, PYTHONPATH=str(site))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env=env, cwd=tmp_path).stdout.split("\n")
    assert out[0] == str(site / "mabd" / "__init__.py")
    assert out[1] in ("", str(prefix / "bin" / "mabd"))
