// Prismatic joint (paper Eq. prismatic, 5 rows): the relative rotation locked (3 rows), and
// the anchor of body b kept on the slide line through the anchor of body a:
// (A_a wa_i) . (x_b(pb) - x_a(pa)) = 0, i = 1, 2. Polynomial in q, exact gradient.
#include "joints/joint_model.h"

namespace mabd::detail {

void prismatic_rows(const JointModel& j, const Vec12& qa, const Vec12& qb, std::vector<Row>& out) {
  add_rotation_lock_rows(qa, qb, j.ax->ea, j.ax->eb, j.L, out);
  const Vec3 d = body_point(qb, j.pb) - body_point(qa, j.pa);
  for (const Vec3* w : {&j.ax->wa1, &j.ax->wa2}) {
    const Vec3 aw = body_vector(qa, *w);
    Row r;
    r.c = aw.dot(d);
    r.ga = grad_vector(*w, d) - grad_point(j.pa, aw);
    r.gb = grad_point(j.pb, aw);
    out.push_back(r);
  }
}

}  // namespace mabd::detail
