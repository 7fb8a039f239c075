// The extension module mabd._mabd; the package mabd (python/mabd) re-exports it.
#include "python/bindings.h"

PYBIND11_MODULE(_mabd, m) {
  using namespace mabd::python;
  m.doc() =
      "mabd: articulated multibody dynamics with affine bodies. SI units throughout (m, kg, s, "
      "rad, N); vectors in the world frame unless stated; quaternions as (w, x, y, z).";
  bind_errors(m);
  bind_bodies(m);
  bind_joints(m);
  bind_settings(m);
  py::class_<PyWorld> world(m, "World", R"doc(
A simulated world: bodies, joints, settings and their state.

Build one from settings (``World(dt=1e-3)`` or ``World(WorldSettings(...))``) and add bodies and
joints, or load a scene file (``World.from_scene(path)``). Bodies and joints are referred to by
their integer id (the order they were added in) or by name.

State arrays: ``q`` and ``qdot`` are read-only numpy views of the world's own storage, one row
of 12 per body (q = [a1; a2; a3; t], the columns of the affine matrix A then the translation,
in m; qdot in m/s). They follow every step. While any view (or a slice of one) is alive,
calls that may move the storage (add_body, reserve, restore_state) raise BufferError: delete
the views or copy them (``q.copy()``) first. Every other array a method returns is a new copy.
)doc");
  bind_world(m, world);
  bind_soft(m, world);
  bind_state(m, world);
  bind_io(m, world);
  bind_batch(m);
  bind_robotics(m);
  m.attr("__version__") = MABD_VERSION;
}
