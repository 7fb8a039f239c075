// mabd.WorldBatch: n copies of a world stepped on a thread pool with the GIL released, state as
// arrays with a leading batch dimension (include/mabd/batch.h).
#include <algorithm>
#include <limits>

#include "python/bindings.h"

namespace mabd::python {

namespace {

struct PyBatch {
  PyBatch(const PyWorld& proto, std::size_t n, int threads, std::uint64_t seed)
      : batch(proto.world, n, threads), seed(seed) {}
  WorldBatch batch;
  std::uint64_t seed;
};

WorldState state_of(const py::bytes& b) {
  const std::string s = b;
  WorldState state;
  state.data.assign(s.begin(), s.end());
  return state;
}

/// Joint ids from names or indices, looked up in world 0 (every copy has the same model).
std::vector<JointId> joints_of(const WorldBatch& b, const py::list& joints) {
  std::vector<JointId> out;
  const World& w = b.world(0);
  for (const auto& j : joints) {
    if (py::isinstance<py::str>(j)) {
      const std::string name = py::str(j);
      const auto id = w.find_joint(name);
      if (!id) throw InvalidArgument("WorldBatch: unknown joint '" + name + "'");
      out.push_back(*id);
    } else {
      const long long i = j.cast<long long>();
      if (i < 0 || static_cast<std::size_t>(i) >= w.joint_count()) {
        throw InvalidArgument("WorldBatch: joint index " + std::to_string(i) + " out of range");
      }
      out.push_back(JointId{static_cast<std::uint32_t>(i)});
    }
  }
  return out;
}

/// (n, bodies, 12) copy of every world's q (or qdot).
py::array_t<double> stacked(const WorldBatch& b, bool velocities) {
  const std::size_t n = b.size(), bodies = b.world(0).body_count();
  py::array_t<double> out({n, bodies, std::size_t{12}});
  auto a = out.mutable_unchecked<3>();
  for (std::size_t i = 0; i < n; ++i) {
    const World& w = b.world(i);
    for (std::size_t k = 0; k < bodies; ++k) {
      const BodyId id{static_cast<std::uint32_t>(k)};
      const Vec12 v = velocities ? w.velocities(id) : w.coordinates(id);
      for (int c = 0; c < 12; ++c) a(i, k, c) = v[c];
    }
  }
  return out;
}

}  // namespace

void bind_batch(py::module_& m) {
  py::class_<PyBatch>(m, "WorldBatch", R"doc(
n independent copies of a world, stepped together on a pool of threads.

Each world is stepped by one thread at a time and shares nothing with the others: results do
not depend on the thread count (bit-identical to stepping the copies one by one). A world whose
step fails stops at its last valid state; ``failed`` and ``errors`` tell which and why, and the
other worlds go on. Arrays have a leading batch dimension; every array returned is a copy.
Per-world seeds are ``seed + i`` (``seeds``) for the caller's own randomisation.
)doc")
      .def(py::init([](const PyWorld& proto, std::size_t n, int threads, std::uint64_t seed) {
             return std::make_unique<PyBatch>(proto, n, threads, seed);
           }),
           py::arg("world"), py::arg("n"), py::arg("threads") = 1, py::arg("seed") = 0,
           "n copies of `world` (its model and its state now) on `threads` threads.")
      .def_property_readonly("size", [](const PyBatch& b) { return b.batch.size(); })
      .def_property_readonly("threads", [](const PyBatch& b) { return b.batch.threads(); })
      .def_property_readonly(
          "seeds",
          [](const PyBatch& b) {
            py::array_t<std::uint64_t> out(b.batch.size());
            for (std::size_t i = 0; i < b.batch.size(); ++i) out.mutable_at(i) = b.seed + i;
            return out;
          },
          "Per-world seeds, seed + i.")
      .def(
          "step",
          [](PyBatch& b, int n) {
            py::gil_scoped_release release;
            b.batch.step(n);
          },
          py::arg("n") = 1, "Steps every world that has not failed n times (GIL released).")
      .def(
          "q", [](const PyBatch& b) { return stacked(b.batch, false); },
          "(n, bodies, 12) affine coordinates of every world (m).")
      .def(
          "qdot", [](const PyBatch& b) { return stacked(b.batch, true); },
          "(n, bodies, 12) their rates (m/s).")
      .def(
          "joint_positions",
          [](const PyBatch& b, const py::list& joints) {
            const auto ids = joints_of(b.batch, joints);
            py::array_t<double> out({b.batch.size(), ids.size()});
            auto a = out.mutable_unchecked<2>();
            for (std::size_t i = 0; i < b.batch.size(); ++i) {
              for (std::size_t k = 0; k < ids.size(); ++k) {
                a(i, k) = b.batch.world(i).joint_position(ids[k]);
              }
            }
            return out;
          },
          py::arg("joints"),
          "(n, len(joints)) hinge angles (rad) or slides (m) of the given joints (names or ids).")
      .def(
          "set_drive_targets",
          [](PyBatch& b, const py::list& joints,
             const py::array_t<double, py::array::forcecast>& targets) {
            const auto ids = joints_of(b.batch, joints);
            if (targets.ndim() != 2 || static_cast<std::size_t>(targets.shape(0)) != b.batch.size() ||
                static_cast<std::size_t>(targets.shape(1)) != ids.size()) {
              throw InvalidArgument("set_drive_targets: targets must have shape (" +
                                    std::to_string(b.batch.size()) + ", " +
                                    std::to_string(ids.size()) + ")");
            }
            auto t = targets.unchecked<2>();
            for (std::size_t i = 0; i < b.batch.size(); ++i) {
              for (std::size_t k = 0; k < ids.size(); ++k) {
                b.batch.world(i).set_drive_target(ids[k], t(i, k));
              }
            }
          },
          py::arg("joints"), py::arg("targets"),
          "Drive targets per world: targets[i, k] for joints[k] of world i (rad, m, rad/s or m/s).")
      .def(
          "save_states",
          [](const PyBatch& b) {
            py::list out;
            for (std::size_t i = 0; i < b.batch.size(); ++i) {
              const WorldState s = b.batch.world(i).save_state();
              out.append(py::bytes(reinterpret_cast<const char*>(s.data.data()), s.data.size()));
            }
            return out;
          },
          "One save_state() snapshot (bytes) per world.")
      .def(
          "rollout",
          [](PyBatch& b, const py::object& initial, int steps, const py::list& joints,
             const std::optional<py::array_t<double, py::array::forcecast>>& targets) {
            std::vector<WorldState> states;
            if (py::isinstance<py::bytes>(initial)) {
              states.push_back(state_of(initial.cast<py::bytes>()));
            } else {
              for (const auto& s : initial.cast<py::list>()) states.push_back(state_of(s.cast<py::bytes>()));
            }
            if (steps < 0) throw InvalidArgument("rollout: steps must be >= 0");
            const std::size_t n = b.batch.size(), bodies = b.batch.world(0).body_count();
            const auto ids = joints_of(b.batch, joints);
            std::vector<double> control;  // (steps, n, k), copied: read without the GIL
            if (!ids.empty()) {
              if (!targets || targets->ndim() != 3 || targets->shape(0) != steps ||
                  static_cast<std::size_t>(targets->shape(1)) != n ||
                  static_cast<std::size_t>(targets->shape(2)) != ids.size()) {
                throw InvalidArgument("rollout: targets must have shape (steps, n, len(joints)) = (" +
                                      std::to_string(steps) + ", " + std::to_string(n) + ", " +
                                      std::to_string(ids.size()) + ")");
              }
              control.assign(targets->data(), targets->data() + targets->size());
            }
            py::array_t<double> out({static_cast<std::size_t>(steps), n, bodies, std::size_t{12}});
            double* q_out = out.mutable_data();
            std::fill(q_out, q_out + out.size(), std::numeric_limits<double>::quiet_NaN());
            const std::size_t k = ids.size();
            {
              py::gil_scoped_release release;
              b.batch.rollout(
                  states, steps,
                  [&](std::size_t i, int s, World& w) {
                    for (std::size_t j = 0; j < k; ++j) {
                      w.set_drive_target(ids[j], control[(static_cast<std::size_t>(s) * n + i) * k + j]);
                    }
                  },
                  [&](std::size_t i, int s, const World& w) {
                    double* row = q_out + ((static_cast<std::size_t>(s) * n + i) * bodies) * 12;
                    for (std::size_t body = 0; body < bodies; ++body) {
                      const Vec12 q = w.coordinates(BodyId{static_cast<std::uint32_t>(body)});
                      std::copy(q.data(), q.data() + 12, row + body * 12);
                    }
                  });
            }
            return out;
          },
          py::arg("initial"), py::arg("steps"), py::arg("joints") = py::list(),
          py::arg("targets") = py::none(),
          R"doc(Restores `initial` (one save_state() snapshot for every world, or a list of one per
world), then steps `steps` times, setting the drive targets targets[s, i, :] of `joints` before
step s of world i. Returns the (steps, n, bodies, 12) coordinates after each step; the rows of
a world after it failed are NaN.)doc")
      .def(
          "reset",
          [](PyBatch& b, const std::vector<std::size_t>& ids) { b.batch.reset(ids); },
          py::arg("ids"), "Back to the copy made at construction, for the worlds `ids`.")
      .def("reset_all", [](PyBatch& b) { b.batch.reset_all(); })
      .def_property_readonly(
          "failed",
          [](const PyBatch& b) {
            py::array_t<bool> out(b.batch.size());
            for (std::size_t i = 0; i < b.batch.size(); ++i) out.mutable_at(i) = b.batch.failed(i);
            return out;
          },
          "(n,) True where a world's step failed.")
      .def_property_readonly(
          "errors",
          [](const PyBatch& b) {
            std::vector<std::string> out;
            for (std::size_t i = 0; i < b.batch.size(); ++i) out.push_back(b.batch.error(i));
            return out;
          },
          "Per world: the message of the step that failed, or ''.");
}

}  // namespace mabd::python
