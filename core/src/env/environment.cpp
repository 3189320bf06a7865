#include "dstudio/env/environment.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "dstudio/common/random.h"
#include "dstudio/common/resources.h"

namespace dstudio::env {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<TaskSpec> make_tasks() {
  TaskSpec hopper;
  hopper.name = "hopper";
  hopper.model_file = "environments/hopper.xml";
  hopper.obs_dim = 11, hopper.act_dim = 3, hopper.nq = 6, hopper.nv = 6;
  hopper.frame_skip = 4;
  hopper.healthy_reward = 1.0, hopper.ctrl_cost = 1e-3;
  hopper.clip_qvel = true, hopper.terminates = true;
  hopper.min_z = 0.7, hopper.max_z = kInf, hopper.min_angle = -0.2, hopper.max_angle = 0.2;
  hopper.state_bound = 100.0;
  hopper.qpos_noise = 5e-3, hopper.qvel_noise = 5e-3;
  hopper.ref_min_score = -20.272305, hopper.ref_max_score = 3234.3;
  hopper.default_targets = {3600.0, 1800.0};

  TaskSpec walker = hopper;
  walker.name = "walker2d";
  walker.model_file = "environments/walker2d.xml";
  walker.obs_dim = 17, walker.act_dim = 6, walker.nq = 9, walker.nv = 9;
  walker.min_z = 0.8, walker.max_z = 2.0, walker.min_angle = -1.0, walker.max_angle = 1.0;
  walker.state_bound = 0.0;
  walker.ref_min_score = 1.629008, walker.ref_max_score = 4592.3;
  walker.default_targets = {5000.0, 2500.0};

  TaskSpec cheetah;
  cheetah.name = "halfcheetah";
  cheetah.model_file = "environments/halfcheetah.xml";
  cheetah.obs_dim = 17, cheetah.act_dim = 6, cheetah.nq = 9, cheetah.nv = 9;
  cheetah.frame_skip = 5;
  cheetah.healthy_reward = 0.0, cheetah.ctrl_cost = 0.1;
  cheetah.clip_qvel = false, cheetah.terminates = false;
  cheetah.qpos_noise = 0.1, cheetah.qvel_noise = 0.1, cheetah.normal_qvel_noise = true;
  cheetah.ref_min_score = -280.178953, cheetah.ref_max_score = 12135.0;
  cheetah.default_targets = {12000.0, 6000.0};
  std::vector<TaskSpec> all = {hopper, walker, cheetah};
  for (std::size_t i = 0, n = all.size(); i < n; ++i) {
    all[i].base = all[i].name;
    TaskSpec po = all[i];
    po.name += "-po";
    po.obs_dim = po.nq - 1;
    po.positions_only = true;
    all.push_back(po);
  }
  return all;
}

const std::vector<TaskSpec>& tasks() {
  static const std::vector<TaskSpec> all = make_tasks();
  return all;
}

std::string letters_and_digits(std::string_view name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void check_size(std::size_t have, int want, const char* what) {
  if (have != static_cast<std::size_t>(want))
    throw EnvError(std::string(what) + " has " + std::to_string(have) +
                   " values; the environment needs " + std::to_string(want));
}

}  // namespace

const TaskSpec& task(std::string_view name) {
  // Longest known name that prefixes the normalised name, so "hopper-medium-v2" is hopper.
  const std::string key = letters_and_digits(name);
  const TaskSpec* best = nullptr;
  for (const auto& t : tasks())
    if (key.rfind(letters_and_digits(t.name), 0) == 0 &&
        (!best || t.name.size() > best->name.size()))
      best = &t;
  if (!best) {
    std::string known;
    for (const auto& n : task_names()) known += (known.empty() ? "" : ", ") + n;
    throw EnvError("unknown environment '" + std::string(name) + "'; known environments: " + known);
  }
  return *best;
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const auto& t : tasks()) names.push_back(t.name);
  return names;
}

double normalized_score(const TaskSpec& spec, double episode_return) {
  return 100.0 * (episode_return - spec.ref_min_score) / (spec.ref_max_score - spec.ref_min_score);
}

std::vector<JointCoordinate> joint_coordinates(const mjModel* model) {
  std::vector<JointCoordinate> out;
  for (int j = 0; j < model->njnt; ++j)
    if (model->jnt_type[j] == mjJNT_HINGE || model->jnt_type[j] == mjJNT_SLIDE) {
      const char* name = mj_id2name(model, mjOBJ_JOINT, j);
      out.push_back({name ? name : "joint " + std::to_string(j), model->jnt_qposadr[j]});
    }
  return out;
}

ModelPtr load_model(const TaskSpec& spec, const std::filesystem::path& mjcf) {
  char error[1024] = "";
  mjModel* m = nullptr;
  std::string source;
  if (mjcf.empty()) {
    const auto text = embedded_resource(spec.model_file);
    if (!text) throw EnvError("no embedded model '" + spec.model_file + "'");
    // MuJoCo reads embedded files through a virtual file system.
    auto vfs = std::make_unique<mjVFS>();
    mj_defaultVFS(vfs.get());
    const std::string file = std::filesystem::path(spec.model_file).filename().string();
    if (mj_makeEmptyFileVFS(vfs.get(), file.c_str(), static_cast<int>(text->size())) != 0)
      throw EnvError("cannot stage the model '" + spec.model_file + "'");
    const int i = mj_findFileVFS(vfs.get(), file.c_str());
    std::memcpy(vfs->filedata[i], text->data(), text->size());
    m = mj_loadXML(file.c_str(), vfs.get(), error, sizeof error);
    mj_deleteVFS(vfs.get());
    source = spec.model_file;
  } else {
    if (!std::filesystem::exists(mjcf)) throw EnvError(mjcf.string() + ": no such file");
    m = mj_loadXML(mjcf.c_str(), nullptr, error, sizeof error);
    source = mjcf.string();
  }
  if (!m) throw EnvError(source + ": the MJCF model does not compile: " + error);
  ModelPtr model(m, [](const mjModel* p) { mj_deleteModel(const_cast<mjModel*>(p)); });
  if (m->nq != spec.nq || m->nv != spec.nv || m->nu != spec.act_dim)
    throw EnvError(source + ": the model has nq " + std::to_string(m->nq) + ", nv " +
                   std::to_string(m->nv) + ", nu " + std::to_string(m->nu) + " but " + spec.name +
                   " needs " + std::to_string(spec.nq) + ", " + std::to_string(spec.nv) + ", " +
                   std::to_string(spec.act_dim));
  return model;
}

Environment::Environment(std::string_view name) : Environment(task(name), load_model(task(name))) {}

Environment::Environment(const TaskSpec& spec, ModelPtr model)
    : spec_(spec), model_(std::move(model)) {
  data_ = mj_makeData(model_.get());
  if (!data_) throw EnvError("MuJoCo could not allocate the simulation state");
}

Environment::~Environment() {
  if (data_) mj_deleteData(data_);
}

Environment::Environment(Environment&& o) noexcept
    : spec_(std::move(o.spec_)),
      model_(std::move(o.model_)),
      data_(std::exchange(o.data_, nullptr)),
      steps_(o.steps_) {}

Environment& Environment::operator=(Environment&& o) noexcept {
  if (this != &o) {
    if (data_) mj_deleteData(data_);
    spec_ = std::move(o.spec_);
    model_ = std::move(o.model_);
    data_ = std::exchange(o.data_, nullptr);
    steps_ = o.steps_;
  }
  return *this;
}

double Environment::dt() const {
  return model_->opt.timestep * spec_.frame_skip;
}

std::span<const double> Environment::qpos() const {
  return {data_->qpos, static_cast<std::size_t>(model_->nq)};
}
std::span<const double> Environment::qvel() const {
  return {data_->qvel, static_cast<std::size_t>(model_->nv)};
}

void Environment::reset(std::uint64_t seed, std::span<float> obs) {
  const mjModel* m = model_.get();
  mj_resetData(m, data_);
  Random random(seed);
  for (int i = 0; i < m->nq; ++i)
    data_->qpos[i] = m->qpos0[i] + random.uniform(-spec_.qpos_noise, spec_.qpos_noise);
  for (int i = 0; i < m->nv; ++i)
    data_->qvel[i] = spec_.normal_qvel_noise ? spec_.qvel_noise * random.normal()
                                             : random.uniform(-spec_.qvel_noise, spec_.qvel_noise);
  mj_forward(m, data_);
  steps_ = 0;
  observe(obs);
}

StepResult Environment::step(std::span<const float> action, std::span<float> obs) {
  check_size(action.size(), spec_.act_dim, "the action");
  const mjModel* m = model_.get();
  double control = 0.0;
  for (int i = 0; i < spec_.act_dim; ++i) {
    if (!std::isfinite(action[i]))
      throw EnvError("the action holds NaN or Inf at index " + std::to_string(i));
    data_->ctrl[i] = action[i];  // MuJoCo clamps to ctrlrange; the cost uses the action as given
    control += static_cast<double>(action[i]) * action[i];
  }
  const double x_before = data_->qpos[0];
  for (int k = 0; k < spec_.frame_skip; ++k) mj_step(m, data_);
  const double x_after = data_->qpos[0];
  ++steps_;

  StepResult r;
  r.reward = spec_.forward_weight * (x_after - x_before) / dt() + spec_.healthy_reward -
             spec_.ctrl_cost * control;
  r.terminated = spec_.terminates && !healthy();
  r.truncated = !r.terminated && steps_ >= spec_.max_episode_steps;
  observe(obs);
  return r;
}

void Environment::observe(std::span<float> obs) const {
  check_size(obs.size(), spec_.obs_dim, "the observation buffer");
  const mjModel* m = model_.get();
  int k = 0;
  for (int i = 1; i < m->nq; ++i) obs[k++] = static_cast<float>(data_->qpos[i]);
  if (spec_.positions_only) return;
  for (int i = 0; i < m->nv; ++i) {
    const double v = data_->qvel[i];
    obs[k++] = static_cast<float>(spec_.clip_qvel ? std::clamp(v, -10.0, 10.0) : v);
  }
}

void Environment::set_state(std::span<const double> qpos, std::span<const double> qvel) {
  check_size(qpos.size(), model_->nq, "qpos");
  check_size(qvel.size(), model_->nv, "qvel");
  std::copy(qpos.begin(), qpos.end(), data_->qpos);
  std::copy(qvel.begin(), qvel.end(), data_->qvel);
  mj_forward(model_.get(), data_);
}

PhysicsState Environment::save_state() const {
  const mjModel* m = model_.get();
  PhysicsState s;
  s.qpos.assign(data_->qpos, data_->qpos + m->nq);
  s.qvel.assign(data_->qvel, data_->qvel + m->nv);
  s.qacc_warmstart.assign(data_->qacc_warmstart, data_->qacc_warmstart + m->nv);
  s.ctrl.assign(data_->ctrl, data_->ctrl + m->nu);
  s.time = data_->time;
  s.elapsed_steps = steps_;
  return s;
}

void Environment::restore_state(const PhysicsState& s) {
  const mjModel* m = model_.get();
  check_size(s.qpos.size(), m->nq, "qpos");
  check_size(s.qvel.size(), m->nv, "qvel");
  check_size(s.qacc_warmstart.size(), m->nv, "qacc_warmstart");
  check_size(s.ctrl.size(), m->nu, "ctrl");
  std::copy(s.qpos.begin(), s.qpos.end(), data_->qpos);
  std::copy(s.qvel.begin(), s.qvel.end(), data_->qvel);
  std::copy(s.qacc_warmstart.begin(), s.qacc_warmstart.end(), data_->qacc_warmstart);
  std::copy(s.ctrl.begin(), s.ctrl.end(), data_->ctrl);
  data_->time = s.time;
  steps_ = s.elapsed_steps;
  mj_forward(m, data_);
  // The constraint solver leaves its answer as the next warm start; the next step must start
  // from the saved one, as it did the first time.
  std::copy(s.qacc_warmstart.begin(), s.qacc_warmstart.end(), data_->qacc_warmstart);
}

bool Environment::healthy() const {
  const double z = data_->qpos[1], angle = data_->qpos[2];
  if (!(spec_.min_z < z && z < spec_.max_z)) return false;
  if (!(spec_.min_angle < angle && angle < spec_.max_angle)) return false;
  if (spec_.state_bound > 0.0) {
    const double b = spec_.state_bound;
    for (int i = 2; i < model_->nq; ++i)
      if (!(-b < data_->qpos[i] && data_->qpos[i] < b)) return false;
    for (int i = 0; i < model_->nv; ++i)
      if (!(-b < data_->qvel[i] && data_->qvel[i] < b)) return false;
  }
  return true;
}

BatchEnvironment::BatchEnvironment(std::string_view name, int copies) {
  if (copies < 1) throw EnvError("a batch needs at least one environment");
  const TaskSpec& spec = task(name);
  const ModelPtr model = load_model(spec);
  envs_.reserve(static_cast<std::size_t>(copies));
  for (int i = 0; i < copies; ++i) envs_.emplace_back(spec, model);
  running_.assign(static_cast<std::size_t>(copies), 0);
  last_.assign(static_cast<std::size_t>(copies), StepResult{});
}

void BatchEnvironment::reset(std::span<const std::uint64_t> seeds, std::span<float> obs) {
  check_size(seeds.size(), size(), "the seed list");
  const int S = spec().obs_dim;
  check_size(obs.size(), size() * S, "the observation buffer");
  for (int i = 0; i < size(); ++i) {
    envs_[i].reset(seeds[i], obs.subspan(static_cast<std::size_t>(i) * S, S));
    running_[i] = 1;
    last_[i] = StepResult{};
  }
}

int BatchEnvironment::step(std::span<const float> actions, std::span<float> obs,
                           std::span<double> rewards) {
  const int S = spec().obs_dim, A = spec().act_dim;
  check_size(actions.size(), size() * A, "the action batch");
  check_size(obs.size(), size() * S, "the observation buffer");
  check_size(rewards.size(), size(), "the reward buffer");
  int still = 0;
  for (int i = 0; i < size(); ++i) {
    rewards[i] = 0.0;
    if (!running_[i]) continue;
    last_[i] = envs_[i].step(actions.subspan(static_cast<std::size_t>(i) * A, A),
                             obs.subspan(static_cast<std::size_t>(i) * S, S));
    rewards[i] = last_[i].reward;
    running_[i] = !(last_[i].terminated || last_[i].truncated);
    still += running_[i];
  }
  return still;
}

}  // namespace dstudio::env
