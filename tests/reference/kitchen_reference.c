/* The Franka Kitchen's reference numbers for tests/core/kitchen_test.cpp, written from D4RL's code
 * (d4rl/kitchen/kitchen_envs.py, adept_envs/franka/kitchen_multitask_v0.py,
 * robot/franka_robot.py, robot/franka_config.xml) straight on MuJoCo's C API, with none of the
 * studio's code: the model is read from the files on disk (no virtual file system), the noise is
 * SplitMix64 as the studio's Random draws it (the studio's stream, in D4RL's order).
 *
 *   gcc -O2 -o /tmp/kitchen_reference tests/reference/kitchen_reference.c -lmujoco -lm
 *   /tmp/kitchen_reference \
 *     resources/environments/kitchen/adept_envs/franka/assets/franka_kitchen_jntpos_act_ab.xml
 */
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t stream;

static double uniform(double lo, double hi) {
  uint64_t z = (stream += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return lo + (hi - lo) * ((double)(z >> 11) * 0x1.0p-53);
}

/* franka_config.xml's pos_noise_amp for qpos0 ... qpos29 and the robot's pos_bound. */
static const double amp[30] = {0.1,    0.1,   0.1,   0.1,    0.1,    0.1,    0.1,    0.1,
                               0.1,    0.005, 0.005, 0.0005, 0.0005, 0.0005, 0.0005, 0.0005,
                               0.0005, 0.005, 0.005, 0.005,  0.1,    0.1,    0.1,    0.005,
                               0.005,  0.005, 0.1,   0.1,    0.1,    0.005};
static const double lo_bound[9] = {-2.9, -1.8, -2.9, -3.1, -2.9, 0.0, -2.9, 0.0, 0.0};
static const double hi_bound[9] = {2.9, 1.8, 2.9, 0.0, 2.9, 3.8, 2.9, 0.04, 0.04};
static const double init_qpos[30] = {
    1.48388023e-01,  -1.76848573e+00, 1.84390296e+00,  -2.47685760e+00, 2.60252026e-01,
    7.12533105e-01,  1.59515394e+00,  4.79267505e-02,  3.71350919e-02,  -2.66279850e-04,
    -5.18043486e-05, 3.12877220e-05,  -4.51199853e-05, -3.90842156e-06, -4.22629655e-05,
    6.28065475e-05,  4.04984708e-05,  4.62730939e-04,  -2.26906415e-04, -4.65501369e-04,
    -6.44129196e-03, -1.77048263e-03, 1.08009684e-03,  -2.69397440e-01, 3.50383255e-01,
    1.61944683e+00,  1.00618764e+00,  4.06395120e-03,  -6.62095997e-03, -2.68278933e-04};

/* Robot.get_obs: qp, qv, qp_obj, qv_obj noise in that order; qpos (noisy) to obs. */
static void get_obs(const mjData* d, double obs[30]) {
  for (int i = 0; i < 9; i++) obs[i] = d->qpos[i] + 0.1 * amp[i] * uniform(-1.0, 1.0);
  for (int i = 0; i < 9; i++) uniform(-1.0, 1.0);
  for (int i = 9; i < 30; i++) obs[i] = d->qpos[i] + 0.1 * amp[i] * uniform(-1.0, 1.0);
  for (int i = 9; i < 30; i++) uniform(-1.0, 1.0);
}

static double clip(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

static void print(const char* what, const double* v, int n) {
  printf("%s", what);
  for (int i = 0; i < n; i++) printf("%s%.17g", i ? ", " : " {", v[i]);
  printf("}\n");
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: kitchen_reference franka_kitchen_jntpos_act_ab.xml\n");
    return 2;
  }
  char error[1000] = "";
  mjModel* m = mj_loadXML(argv[1], NULL, error, sizeof error);
  if (!m) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  mjData* d = mj_makeData(m);
  printf("nq %d nv %d nu %d timestep %.17g\n", m->nq, m->nv, m->nu, m->opt.timestep);

  /* Reset with seed 7: init_qpos at rest, five observations for the cache and reset_model's. */
  stream = 7;
  mj_resetData(m, d);
  for (int i = 0; i < 30; i++) d->qpos[i] = init_qpos[i];
  for (int i = 0; i < m->nv; i++) d->qvel[i] = 0.0;
  mj_forward(m, d); /* Robot.reset's sim.forward(), before the observations */
  double obs[30];
  for (int k = 0; k < 6; k++) get_obs(d, obs);
  print("reset obs", obs, 30);

  /* 50 steps of a_t[i] = 0.9 sin(0.37 t + 0.61 i) (t from 0), Robot_VelAct's servo target. */
  const double step = 40 * m->opt.timestep;
  for (int t = 0; t < 50; t++) {
    for (int i = 0; i < 9; i++) {
      const double a = clip((double)(float)(0.9 * sin(0.37 * t + 0.61 * i)), -1.0, 1.0);
      const double v = clip(2.0 * a, -10.0, 10.0);
      d->ctrl[i] = clip(obs[i] + v * step, lo_bound[i], hi_bound[i]);
    }
    for (int k = 0; k < 40; k++) mj_step(m, d);
    get_obs(d, obs);
    if (t == 0 || t == 9 || t == 49) {
      printf("after step %d\n", t + 1);
      print("ctrl", d->ctrl, 9);
      print("qpos", d->qpos, 30);
      print("obs", obs, 30);
    }
  }
  printf("time %.17g\n", d->time);
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
