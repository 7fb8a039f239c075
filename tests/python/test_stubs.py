"""The type stubs (python/mabd/_mabd.pyi) describe what the extension module defines."""

import ast
import inspect
import pathlib

import mabd
from mabd import _mabd


def stub_tree():
    return ast.parse(pathlib.Path(_mabd.__file__).with_name("_mabd.pyi").read_text())


def stub_names(body):
    names = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_stub_lists_every_module_name_and_world_member():
    tree = stub_tree()
    module = stub_names(tree.body)
    assert public(_mabd) - module == set()
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for name, cls in inspect.getmembers(_mabd, inspect.isclass):
        if name.startswith("_") or issubclass(cls, BaseException):
            continue
        members = stub_names(classes[name].body)
        extra = {"name", "value"} if hasattr(cls, "__members__") else set()  # enum helpers
        missing = public(cls) - members - extra - set(getattr(cls, "__members__", {}))
        assert missing == set(), f"{name}: {sorted(missing)} not in the stub"


def test_package_reexports_the_extension():
    assert mabd.World is _mabd.World
    assert issubclass(mabd.SimulationError, RuntimeError)
    assert issubclass(mabd.InvalidArgument, ValueError)
    assert (pathlib.Path(mabd.__file__).parent / "py.typed").exists()


def test_package_all_names_what_it_exports():
    assert set(mabd.__all__) >= {"World", "BodyDef", "JointDef", "record_run", "write_viewer"}
    assert "os" not in mabd.__all__ and "annotations" not in mabd.__all__
    for name in mabd.__all__:
        assert hasattr(mabd, name)
