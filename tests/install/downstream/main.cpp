// Drops a body for 100 steps and checks its height against free fall, z = z0 - g t^2 / 2
// (the default generalized-alpha integrator is exact for a constant force). Exit code 0 when
// the drop matches to 1e-6 relative, 1 otherwise.
#include <mabd/mabd.h>

#include <cmath>
#include <cstdio>

int main() {
  mabd::WorldSettings settings;
  settings.dt = 1e-3;                      // s
  settings.gravity = {0, 0, -9.81};        // m/s^2
  mabd::World world(settings);

  mabd::BodyDef ball;
  ball.shape.type = mabd::ShapeType::Sphere;
  ball.shape.radius = 0.1;                 // m
  ball.position = {0, 0, 10};              // m
  const mabd::BodyId id = world.add_body(ball);

  const int steps = 100;
  const double z0 = world.pose(id).position.z();
  for (int i = 0; i < steps; ++i) world.step();

  const double t = steps * settings.dt;
  const double drop = z0 - world.pose(id).position.z();
  const double expected = 9.81 * t * t / 2;
  const double error = std::abs(drop - expected) / expected;
  std::printf("mabd downstream: fell %.9f m in %.2f s, free fall %.9f m, relative error %.2e\n",
              drop, t, expected, error);
  return error <= 1e-6 ? 0 : 1;
}
