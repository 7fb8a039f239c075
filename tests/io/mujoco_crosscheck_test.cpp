// The MJCF double pendulum of models/ in mabd against MuJoCo 2.2 (Debian's libmujoco-dev) on
// the same file: MuJoCo reads it in its own generalized coordinates and steps it with RK4 at
// a tenth of mabd's step. Built with MuJoCo where CMake finds it, skipped otherwise (MuJoCo is
// not a dependency of mabd).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "mabd/scene.h"
#include "mabd/world.h"

#ifdef MABD_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

namespace {

using namespace mabd;

const std::string kModel = std::string(MABD_SOURCE_DIR) + "/models/double_pendulum.xml";

TEST(MujocoCrossCheck, DoublePendulumMatchesMujoco) {
#ifndef MABD_HAVE_MUJOCO
  GTEST_SKIP() << "built without MuJoCo (libmujoco-dev)";
#else
  char error[1000] = "";
  mjModel* m = mj_loadXML(kModel.c_str(), nullptr, error, sizeof error);
  ASSERT_NE(m, nullptr) << error;
  mjData* d = mj_makeData(m);
  ASSERT_EQ(m->nq, 2);
  m->opt.integrator = mjINT_RK4;
  m->opt.timestep = 1e-4;
  // mabd: the same file, rods made rigid (1e12 Pa; at the default 1e8 Pa they flex by ~3e-4
  // rad over 1 s), its own step (1e-3 s, from the file).
  Scene scene = load_model(kModel);
  for (BodyDef& body : scene.bodies) body.material.youngs_modulus = 1e12;
  World world = build_world(scene);
  const JointId shoulder = *world.find_joint("shoulder"), elbow = *world.find_joint("elbow");
  const int steps = static_cast<int>(std::lround(1.0 / world.settings().dt));
  const int sub = static_cast<int>(std::lround(world.settings().dt / m->opt.timestep));
  double worst = 0, swing = 0;
  for (int n = 0; n < steps; ++n) {
    world.step();
    for (int k = 0; k < sub; ++k) mj_step(m, d);
    worst = std::max({worst, std::abs(world.joint_position(shoulder) - d->qpos[0]),
                      std::abs(world.joint_position(elbow) - d->qpos[1])});
    swing = std::max(swing, std::abs(d->qpos[0]));
  }
  std::printf("mabd (h = %g s) against MuJoCo 2.2 (RK4, h = %g s) over 1 s: largest hinge angle "
              "difference %.3g rad (shoulder swings %.3g rad)\n",
              world.settings().dt, m->opt.timestep, worst, swing);
  EXPECT_GT(swing, 0.3);  // the pendulum moves
  EXPECT_LT(worst, 1e-5);
  mj_deleteData(d);
  mj_deleteModel(m);
#endif
}

}  // namespace
