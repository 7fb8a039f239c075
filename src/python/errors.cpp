// mabd's exceptions as Python exceptions: Error (RuntimeError) and its subclasses
// InvalidArgument and SceneError (also ValueError) and SimulationError.
#include <exception>

#include "python/bindings.h"

namespace mabd::python {

namespace {

PyObject* new_exception(py::module_& m, const char* name, const char* doc, py::tuple bases) {
  const std::string qualified = std::string("mabd.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));
  return type;
}

}  // namespace

void bind_errors(py::module_& m) {
  static PyObject* error = nullptr;
  static PyObject* invalid = nullptr;
  static PyObject* scene = nullptr;
  static PyObject* simulation = nullptr;
  const py::handle runtime_error(PyExc_RuntimeError), value_error(PyExc_ValueError);
  error = new_exception(m, "Error", "Base of every error mabd raises on purpose.",
                        py::make_tuple(runtime_error));
  invalid = new_exception(m, "InvalidArgument",
                          "Invalid input (degenerate shape, non-positive dt, NaN, unknown body, "
                          "...); the message names the item and what is wrong.",
                          py::make_tuple(py::handle(error), value_error));
  scene = new_exception(m, "SceneError",
                        "A scene file could not be read or is invalid: 'FILE: ITEM: what is "
                        "wrong'.",
                        py::make_tuple(py::handle(error), value_error));
  simulation = new_exception(m, "SimulationError",
                             "The simulation diverged; the message names the step, the body and "
                             "the quantity. The state is left at the last valid step.",
                             py::make_tuple(py::handle(error)));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const SimulationError& e) {
      PyErr_SetString(simulation, e.what());
    } catch (const SceneError& e) {
      PyErr_SetString(scene, e.what());
    } catch (const InvalidArgument& e) {
      PyErr_SetString(invalid, e.what());
    } catch (const Error& e) {
      PyErr_SetString(error, e.what());
    }
  });
}

}  // namespace mabd::python
