// Soft bodies: their definition (nodes, tets, material, attachments), adding one to a world,
// and the per-soft-body queries (state, energies, tets, names).
#include <string>

#include "python/arrays.h"

namespace mabd::python {

namespace {

py::array_t<double> nodes_array(const SoftBodyDef& d) { return points_array(d.nodes); }

/// Non-finite coordinates are left to World.add_soft_body, which names the node.
void set_nodes(SoftBodyDef& d, const py::array_t<double, py::array::forcecast>& a) {
  d.nodes = read_points(a, "SoftBodyDef.nodes");
}

py::array_t<std::int64_t> tets_array(const std::vector<std::array<int, 4>>& tets) {
  return index_array(tets);
}

/// Indices beyond the node count are left to World.add_soft_body, which names the tet.
void set_tets(SoftBodyDef& d, const py::array_t<std::int64_t, py::array::forcecast>& a) {
  d.tets = read_index_rows<4>(a, "SoftBodyDef.tets", "node");
}

py::list attachments_list(const SoftBodyDef& d) {
  py::list out;
  for (const SoftAttachment& a : d.attachments) {
    const py::object body = a.body.valid() ? py::object(py::int_(a.body.index)) : py::none();
    out.append(py::make_tuple(a.node, body));
  }
  return out;
}

/// An integer (Python int or numpy integer, not bool) as a long long; false if `o` is not one.
bool as_index(const py::handle& o, long long& out) {
  if (PyBool_Check(o.ptr()) || !PyIndex_Check(o.ptr())) return false;
  out = py::int_(py::reinterpret_borrow<py::object>(o)).cast<long long>();
  return true;
}

/// One (node, body id or None) pair of SoftBodyDef.attachments; `k` is its place in the list.
SoftAttachment attachment_from(const py::handle& item, std::size_t k) {
  const std::string where = "SoftBodyDef.attachments[" + std::to_string(k) + "]";
  if (!py::isinstance<py::sequence>(item) || py::isinstance<py::str>(item) ||
      py::len(item) != 2) {
    throw InvalidArgument(where + ": expected a pair (node index, body id or None)");
  }
  const py::sequence pair = py::reinterpret_borrow<py::sequence>(item);
  const py::object node = pair[0], body = pair[1];
  long long n = 0, b = 0;
  if (!as_index(node, n)) throw InvalidArgument(where + ": node index must be an int");
  if (n < 0 || n > INT32_MAX) {
    throw InvalidArgument(where + ": node index " + std::to_string(n) + " out of range");
  }
  SoftAttachment a;
  a.node = static_cast<int>(n);
  if (body.is_none()) return a;
  if (!as_index(body, b)) {
    throw InvalidArgument(where + ": body must be a body id (int) or None (the world)");
  }
  if (b < 0 || b >= static_cast<long long>(UINT32_MAX)) {
    throw InvalidArgument(where + ": body id " + std::to_string(b) + " out of range");
  }
  a.body = BodyId{static_cast<std::uint32_t>(b)};
  return a;
}

void set_attachments(SoftBodyDef& d, const py::iterable& list) {
  std::vector<SoftAttachment> out;
  std::size_t k = 0;
  for (const py::handle item : list) out.push_back(attachment_from(item, k++));
  d.attachments = std::move(out);
}

bool attached_to_a_body(const SoftBodyDef& d) {
  for (const SoftAttachment& a : d.attachments) {
    if (a.body.valid()) return true;
  }
  return false;
}

py::tuple state_arrays(const PyWorld& w, const py::object& ref) {
  const SoftBodyState st = w.world.soft_body_state(w.soft_body(ref));
  Eigen::MatrixX3d x(st.positions.size(), 3), v(st.velocities.size(), 3);
  for (std::size_t i = 0; i < st.positions.size(); ++i) {
    x.row(static_cast<Eigen::Index>(i)) = st.positions[i].transpose();
    v.row(static_cast<Eigen::Index>(i)) = st.velocities[i].transpose();
  }
  return py::make_tuple(x, v);
}

py::tuple energies(const PyWorld& w, const py::object& ref) {
  const SoftBodyId s = w.soft_body(ref);
  return py::make_tuple(w.world.soft_kinetic_energy(s), w.world.soft_elastic_energy(s),
                        w.world.soft_potential_energy(s));
}

}  // namespace

std::uint32_t add_soft_body(PyWorld& w, const SoftBodyDef& def) {
  const SoftBodyId id = w.world.add_soft_body(def);
  if (w.has_moved && attached_to_a_body(def) && w.added_after_motion.empty()) {
    w.added_after_motion = "soft body " + std::to_string(id.index) + " (attached to a body)";
  }
  w.ops.append(py::make_tuple("soft", def));
  return id.index;
}

void bind_soft(py::module_& m, py::class_<PyWorld>& cls) {
  StructBinder<SoftBodyDef> def(
      m, "SoftBodyDef",
      "A tetrahedral soft body (stable Neo-Hookean finite elements, lumped mass), stepped with "
      "the bodies in one implicit step. Coordinates are in the world frame at t = 0 (m).");
  def.field("name", &SoftBodyDef::name, "unique among soft bodies; may be empty")
      .property("nodes", &nodes_array, &set_nodes,
                "(N, 3) rest positions of the nodes, world frame at t = 0 (m); a copy")
      .property(
          "tets", [](const SoftBodyDef& d) { return tets_array(d.tets); }, &set_tets,
          "(M, 4) node indices of the tetrahedra, any orientation; a copy")
      .field("material", &SoftBodyDef::material,
             "Material: density (kg/m^3), Young's modulus (Pa), Poisson ratio in (-1, 0.5), "
             "friction of its contacts (geometric mean with the other body's)")
      .field("linear_velocity", &SoftBodyDef::linear_velocity,
             "initial velocity of every node, world frame (m/s)")
      .field("face_contacts", &SoftBodyDef::face_contacts,
             "boundary faces touch spheres and capsules between the nodes (default True); "
             "False: nodes only")
      .property("attachments", &attachments_list, &set_attachments,
                "list of (node index, body id or None): the node is held at the point of the "
                "body (None: the world) where it is when the soft body is added; one per node "
                "at most; a copy (assign a whole list)")
      .finish();

  cls.def("add_soft_body", &add_soft_body, py::arg("soft_body_def"),
          "Validates and adds a soft body (SoftBodyDef); returns its id. Attachment points are "
          "taken in the attached bodies' current configuration. InvalidArgument (a ValueError) "
          "names the soft body and the item: no tets, a node index out of range, a non-finite "
          "node, a degenerate tet, a taken name, a bad material, an unknown body.")
      .def_property_readonly(
          "soft_body_count", [](const PyWorld& w) { return w.world.soft_body_count(); },
          "Number of soft bodies (from scene files and add_soft_body).")
      .def(
          "find_soft_body",
          find_query(&World::find_soft_body),
          py::arg("name"), "Id of the soft body named `name`, or None.")
      .def(
          "soft_body_name",
          [](const PyWorld& w, const py::object& s) {
            return w.world.soft_body_name(w.soft_body(s));
          },
          py::arg("soft_body"), "Name of the soft body (id or name).")
      .def(
          "soft_body_tets",
          [](const PyWorld& w, const py::object& s) {
            return tets_array(w.world.soft_body_tets(w.soft_body(s)));
          },
          py::arg("soft_body"),
          "(M, 4) node indices of the soft body's tets, positively oriented (as the solver uses "
          "them: a tet given inverted has two nodes swapped); a copy.")
      .def("soft_body_state", &state_arrays, py::arg("soft_body"),
           "(positions (m), velocities (m/s)) of the soft body's (id or name) nodes, (N, 3) "
           "arrays each, world frame.")
      .def("soft_body_energies", &energies, py::arg("soft_body"),
           "(kinetic, elastic, potential = gravity + elastic) energy of the soft body (id or "
           "name) (J); gravity's zero at the world origin.");
}

}  // namespace mabd::python
