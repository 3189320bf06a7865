#include "dstudio/env/environment.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <utility>

#include "builtin_environments.h"
#include "dstudio/common/random.h"
#include "dstudio/common/resources.h"
#include "dstudio/env/episode_end.h"

namespace dstudio::env {
namespace {

std::string letters_and_digits(std::string_view name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// letters_and_digits without a trailing version ("v2"), so that a dataset of an earlier version
// of a task ("antmaze-umaze-v0") finds the task.
std::string lookup_key(std::string_view name) {
  std::string key = letters_and_digits(name);
  std::size_t digits = key.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(key[digits - 1]))) --digits;
  if (digits < key.size() && digits > 0 && key[digits - 1] == 'v') key.resize(digits - 1);
  return key;
}

// Whether the first `count` letters and digits of `name` end a word of it: at its end, before a
// separator ("pen-human-v1", "hopper_medium") or where lower case turns upper ("HopperMedium"),
// so that "pen" names "pen-expert-v1" but not "pendulum".
bool ends_a_word(std::string_view name, std::size_t count) {
  std::size_t seen = 0, i = 0;
  for (; i < name.size() && seen < count; ++i)
    if (std::isalnum(static_cast<unsigned char>(name[i]))) ++seen;
  if (i >= name.size()) return true;
  const auto next = static_cast<unsigned char>(name[i]),
             last = static_cast<unsigned char>(name[i - 1]);
  return !std::isalnum(next) || (std::islower(last) && std::isupper(next));
}

// MuJoCo 2.2's virtual file system keeps a file's name without its folders and finds a file by
// that name alone, so two assets of one model that share a name (the Franka arm's
// meshes/collision/link0.stl and meshes/visual/link0.stl) cannot both be staged by their names.
// Each of those is staged under its path from the folder where the paths part, '/' read as '_'
// ("visual_link0.stl"), and the model's references to it are rewritten to that name.
struct VfsNames {
  std::map<std::string, std::string> of;  // asset path -> the name it is staged under
  std::map<std::string, std::vector<std::string>> renamed;  // a shared file name -> its assets
};

std::vector<std::string> path_parts(const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& part : std::filesystem::path(path)) parts.push_back(part.string());
  return parts;
}

VfsNames vfs_names(const std::vector<std::string>& assets, const std::string& task) {
  VfsNames out;
  std::map<std::string, std::vector<std::string>> by_name;
  for (const auto& asset : assets)
    by_name[std::filesystem::path(asset).filename().string()].push_back(asset);
  std::set<std::string> taken;
  for (const auto& [name, group] : by_name)
    if (group.size() == 1) out.of[group.front()] = name, taken.insert(name);
  for (const auto& [name, group] : by_name) {
    if (group.size() == 1) continue;
    if (std::set<std::string>(group.begin(), group.end()).size() != group.size())
      throw EnvError("the model of " + task + " lists the file '" + group.front() + "' twice");
    // The fewest trailing folders that tell the group's files apart.
    for (std::size_t keep = 2;; ++keep) {
      std::set<std::string> distinct;
      std::map<std::string, std::string> staged;
      for (const auto& asset : group) {
        const auto parts = path_parts(asset);
        std::string joined;
        for (std::size_t i = parts.size() - std::min(keep, parts.size()); i < parts.size(); ++i)
          joined += (joined.empty() ? "" : "_") + parts[i];
        distinct.insert(joined);
        staged[asset] = joined;
      }
      if (distinct.size() == group.size()) {
        for (const auto& [asset, staged_name] : staged) {
          if (!taken.insert(staged_name).second)
            throw EnvError("the model of " + task +
                           " has two files that would both be staged as '" + staged_name + "'");
          out.of[asset] = staged_name;
        }
        break;
      }
    }
    out.renamed[name] = group;
  }
  return out;
}

// `xml` with each file="..." attribute that names one of the renamed assets rewritten to its
// staged name. A reference is that asset when the path it gives, read after its last "..", is how
// the asset's path ends ("../../third_party/franka/meshes/visual/link0.stl").
std::string with_vfs_names(std::string_view xml, const std::string& source, const VfsNames& names) {
  static const std::regex attribute(R"((\bfile\s*=\s*)(["'])([^"']*)\2)");
  std::string out;
  auto last = xml.begin();
  for (std::regex_iterator<std::string_view::const_iterator> it(xml.begin(), xml.end(), attribute),
       end;
       it != end; ++it) {
    const auto& match = *it;
    const std::string value = match[3].str();
    const auto group = names.renamed.find(std::filesystem::path(value).filename().string());
    if (group == names.renamed.end()) continue;
    std::vector<std::string> wanted;
    for (const auto& part : path_parts(value)) {
      if (part == "..")
        wanted.clear();
      else if (part != ".")
        wanted.push_back(part);
    }
    std::vector<std::string> fits;
    for (const auto& asset : group->second) {
      const auto parts = path_parts(asset);
      if (parts.size() >= wanted.size() &&
          std::equal(wanted.rbegin(), wanted.rend(), parts.rbegin()))
        fits.push_back(asset);
    }
    // One that fits none is left to MuJoCo (it may sit in a comment); one that fits several
    // cannot be told apart.
    if (fits.empty()) continue;
    if (fits.size() > 1)
      throw EnvError(source + ": the file '" + value + "' could be any of " +
                     std::to_string(fits.size()) + " of the model's files named " + group->first);
    out.append(last, match[0].first);
    out += match[1].str() + match[2].str() + names.of.at(fits.front()) + match[2].str();
    last = match[0].second;
  }
  out.append(last, xml.end());
  return out;
}

void check_size(std::size_t have, int want, const char* what) {
  if (have != static_cast<std::size_t>(want))
    throw EnvError(std::string(what) + " has " + std::to_string(have) +
                   " values; the environment needs " + std::to_string(want));
}

}  // namespace

Registry<EnvironmentDefinition>& environments() {
  static Registry<EnvironmentDefinition>* registry = [] {
    auto* r = new Registry<EnvironmentDefinition>("environment");
    for (auto* family :
         {locomotion_environments, antmaze_environments, adroit_environments, kitchen_environments})
      for (auto& d : family()) {
        validate(d);
        r->add(std::move(d));
      }
    return r;
  }();
  return *registry;
}

namespace {

// Gymnasium-Robotics' AntMaze ("AntMaze_UMaze-v4", Minari's D4RL/antmaze) reads like D4RL's
// names once reduced to letters but is another task (Gymnasium's ant, a 0.45 threshold).
bool gymnasium_robotics_antmaze(std::string_view name) {
  return name.rfind("AntMaze_", 0) == 0;
}

// Gymnasium-Robotics' FrankaKitchen ("FrankaKitchen-v1", Minari's D4RL/kitchen) is another
// kitchen task: a 59-D dict observation and ten times less observation noise.
bool gymnasium_robotics_kitchen(std::string_view name) {
  return name.rfind("FrankaKitchen", 0) == 0;
}

}  // namespace

std::shared_ptr<const EnvironmentDefinition> find_task(std::string_view name) {
  if (gymnasium_robotics_antmaze(name) || gymnasium_robotics_kitchen(name)) return nullptr;
  // Longest known name that prefixes the normalised name at a word's end, so "hopper-medium-v2"
  // is hopper.
  const std::string key = lookup_key(name), plain = letters_and_digits(name);
  std::shared_ptr<const EnvironmentDefinition> best;
  std::size_t best_length = 0;
  for (const auto& t : environments().all()) {
    std::vector<std::string> names = t->aliases;
    names.push_back(t->name);
    for (const auto& n : names) {
      const std::string candidate = lookup_key(n);
      if (candidate.empty()) continue;
      const bool match = (key.rfind(candidate, 0) == 0 || plain.rfind(candidate, 0) == 0) &&
                         ends_a_word(name, candidate.size());
      if (match && candidate.size() > best_length) best = t, best_length = candidate.size();
    }
  }
  return best;
}

const EnvironmentDefinition& task(std::string_view name) {
  const auto found = find_task(name);
  if (!found && gymnasium_robotics_antmaze(name))
    throw EnvError("'" + std::string(name) +
                   "' is Gymnasium-Robotics' AntMaze (Minari's D4RL/antmaze), not D4RL's antmaze: "
                   "Gymnasium's ant and a 0.45 goal threshold. The studio simulates D4RL's "
                   "antmaze-*-v2 tasks only");
  if (!found && gymnasium_robotics_kitchen(name))
    throw EnvError("'" + std::string(name) +
                   "' is Gymnasium-Robotics' FrankaKitchen (Minari's D4RL/kitchen), not D4RL's "
                   "kitchen: a 59-D dict observation (robot and object qpos and qvel, goals per "
                   "element) with ten times less noise. The studio simulates D4RL's "
                   "kitchen-*-v0 tasks only");
  if (!found)
    throw EnvError("unknown environment '" + std::string(name) +
                   "'; known environments: " + environments().joined_names());
  return *found;
}

std::vector<std::string> task_names() {
  return environments().names();
}

void accumulate_subtasks(std::vector<SubTask>& so_far, const std::vector<SubTask>& now) {
  const bool same = so_far.size() == now.size() &&
                    std::equal(so_far.begin(), so_far.end(), now.begin(),
                               [](const SubTask& a, const SubTask& b) { return a.name == b.name; });
  if (!same) {
    so_far = now;
    return;
  }
  for (std::size_t i = 0; i < now.size(); ++i) {
    so_far[i].done = so_far[i].done || now[i].done;
    so_far[i].distance = now[i].distance;
  }
}

double normalized_score(const EnvironmentDefinition& spec, double episode_return) {
  return 100.0 * (episode_return - spec.ref_min_score) / (spec.ref_max_score - spec.ref_min_score);
}

void validate(const EnvironmentDefinition& d) {
  const std::string who = "the environment '" + d.name + "'";
  if (!d.reset || !d.observe || !d.outcome)
    throw UsageError(who + " needs its reset, observe and outcome functions");
  if (d.model_file.empty() && d.model_xml.empty())
    throw UsageError(who + " needs a model (a file or MJCF text)");
  if (d.obs_dim < 1 || d.act_dim < 1 || d.nq < 1 || d.nv < 1 || d.frame_skip < 1 ||
      d.max_episode_steps < 1)
    throw UsageError(who + " needs positive dimensions, frame skip and horizon");
  if (static_cast<int>(d.observation_names.size()) != d.obs_dim)
    throw UsageError(who + " names " + std::to_string(d.observation_names.size()) +
                     " observation dimensions but has " + std::to_string(d.obs_dim));
  if (d.first_velocity < 0 || d.first_velocity > d.obs_dim)
    throw UsageError(who + ": first_velocity must lie within the observation");
  if (!(d.ref_max_score != d.ref_min_score))
    throw UsageError(who + " needs two different reference scores");
  if (d.task_state_size < 0) throw UsageError(who + ": task_state_size must not be negative");
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

ModelPtr load_model(const EnvironmentDefinition& spec, const std::filesystem::path& mjcf) {
  char error[1024] = "";
  mjModel* m = nullptr;
  std::string source;
  if (mjcf.empty()) {
    std::optional<std::string_view> text;
    if (!spec.model_xml.empty())
      text = spec.model_xml;
    else
      text = embedded_resource(spec.model_file);
    if (!text) throw EnvError("no embedded model '" + spec.model_file + "'");
    // MuJoCo reads embedded files through a virtual file system.
    auto vfs = std::make_unique<mjVFS>();
    mj_defaultVFS(vfs.get());
    const std::string file = spec.model_xml.empty()
                                 ? std::filesystem::path(spec.model_file).filename().string()
                                 : spec.name + ".xml";
    const auto stage = [&vfs, &spec](const std::string& name, std::string_view bytes) {
      if (mj_makeEmptyFileVFS(vfs.get(), name.c_str(), static_cast<int>(bytes.size())) != 0)
        throw EnvError("cannot stage '" + name + "' for the model of " + spec.name);
      const int i = mj_findFileVFS(vfs.get(), name.c_str());
      std::memcpy(vfs->filedata[i], bytes.data(), bytes.size());
    };
    try {
      const auto names = vfs_names(spec.model_assets, spec.name);
      if (names.renamed.empty()) {
        stage(file, *text);
      } else {
        stage(file, with_vfs_names(*text, spec.model_file, names));
      }
      for (const auto& asset : spec.model_assets) {
        const auto bytes = embedded_resource(asset);
        if (!bytes)
          throw EnvError("no embedded file '" + asset + "' for the model of " + spec.name);
        const std::string& name = names.of.at(asset);
        if (!names.renamed.empty() && std::filesystem::path(asset).extension() == ".xml")
          stage(name, with_vfs_names(*bytes, asset, names));
        else
          stage(name, *bytes);
      }
    } catch (...) {
      mj_deleteVFS(vfs.get());
      throw;
    }
    m = mj_loadXML(file.c_str(), vfs.get(), error, sizeof error);
    mj_deleteVFS(vfs.get());
    source = spec.model_xml.empty() ? spec.model_file : "the model of " + spec.name;
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

Environment::Environment(const EnvironmentDefinition& spec, ModelPtr model)
    : spec_(spec), model_(std::move(model)) {
  if (!spec_.reset || !spec_.observe || !spec_.outcome)
    throw EnvError("the environment '" + spec_.name + "' has no reset, observe or outcome");
  if (spec_.configure_model) {
    own_model_ = mj_copyModel(nullptr, model_.get());
    if (!own_model_) throw EnvError("MuJoCo could not copy the model of " + spec_.name);
    model_ =
        ModelPtr(own_model_, [](const mjModel* p) { mj_deleteModel(const_cast<mjModel*>(p)); });
  }
  data_ = mj_makeData(model_.get());
  if (!data_) throw EnvError("MuJoCo could not allocate the simulation state");
}

Environment::~Environment() {
  if (data_) mj_deleteData(data_);
}

Environment::Environment(Environment&& o) noexcept
    : spec_(std::move(o.spec_)),
      model_(std::move(o.model_)),
      own_model_(std::exchange(o.own_model_, nullptr)),
      data_(std::exchange(o.data_, nullptr)),
      steps_(o.steps_),
      task_state_(std::move(o.task_state_)) {}

Environment& Environment::operator=(Environment&& o) noexcept {
  if (this != &o) {
    if (data_) mj_deleteData(data_);
    spec_ = std::move(o.spec_);
    model_ = std::move(o.model_);
    own_model_ = std::exchange(o.own_model_, nullptr);
    data_ = std::exchange(o.data_, nullptr);
    steps_ = o.steps_;
    task_state_ = std::move(o.task_state_);
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

void Environment::configure() {
  if (own_model_) spec_.configure_model(own_model_, task_state_);
}

Simulation Environment::simulation() const {
  return Simulation{model_.get(), data_, const_cast<std::vector<double>*>(&task_state_)};
}

std::map<std::string, std::vector<double>> Environment::recorded_state() const {
  return spec_.recorded_state ? spec_.recorded_state(simulation())
                              : std::map<std::string, std::vector<double>>{};
}

void Environment::reset(std::uint64_t seed, std::span<float> obs) {
  const mjModel* m = model_.get();
  mj_resetData(m, data_);
  Random random(seed);
  task_state_.assign(static_cast<std::size_t>(spec_.task_state_size), 0.0);
  Simulation sim = simulation();
  spec_.reset(sim, random);
  check_size(task_state_.size(), spec_.task_state_size, "the task state the reset left");
  configure();
  mj_forward(m, data_);
  steps_ = 0;
  observe(obs);
}

StepResult Environment::step(std::span<const float> action, std::span<float> obs) {
  check_size(action.size(), spec_.act_dim, "the action");
  check_size(obs.size(), spec_.obs_dim, "the observation buffer");
  for (int i = 0; i < spec_.act_dim; ++i)
    if (!std::isfinite(action[i]))
      throw EnvError("the action holds NaN or Inf at index " + std::to_string(i));
  const mjModel* m = model_.get();
  Simulation sim = simulation();
  if (spec_.apply_action)
    spec_.apply_action(action, sim);
  else
    // MuJoCo clamps to ctrlrange; a cost uses the action as given.
    for (int i = 0; i < spec_.act_dim; ++i) data_->ctrl[i] = action[i];
  qpos_before_.assign(data_->qpos, data_->qpos + m->nq);
  for (int k = 0; k < spec_.frame_skip; ++k) mj_step(m, data_);
  ++steps_;

  StepResult r = spec_.outcome(sim, StepContext{action, qpos_before_, steps_});
  r.truncated = !r.terminated && steps_ >= spec_.max_episode_steps;
  observe(obs);
  return r;
}

void Environment::observe(std::span<float> obs) const {
  check_size(obs.size(), spec_.obs_dim, "the observation buffer");
  spec_.observe(simulation(), obs);
}

void Environment::set_task_state(std::span<const double> values) {
  check_size(values.size(), spec_.task_state_size, "the task state");
  task_state_.assign(values.begin(), values.end());
  configure();
  if (own_model_) mj_forward(own_model_, data_);
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
  s.task_state = task_state_;
  return s;
}

void Environment::restore_state(const PhysicsState& s) {
  const mjModel* m = model_.get();
  check_size(s.qpos.size(), m->nq, "qpos");
  check_size(s.qvel.size(), m->nv, "qvel");
  check_size(s.qacc_warmstart.size(), m->nv, "qacc_warmstart");
  check_size(s.ctrl.size(), m->nu, "ctrl");
  check_size(s.task_state.size(), spec_.task_state_size, "the task state");
  std::copy(s.qpos.begin(), s.qpos.end(), data_->qpos);
  std::copy(s.qvel.begin(), s.qvel.end(), data_->qvel);
  std::copy(s.qacc_warmstart.begin(), s.qacc_warmstart.end(), data_->qacc_warmstart);
  std::copy(s.ctrl.begin(), s.ctrl.end(), data_->ctrl);
  data_->time = s.time;
  steps_ = s.elapsed_steps;
  task_state_ = s.task_state;
  configure();
  mj_forward(m, data_);
  // The constraint solver leaves its answer as the next warm start; the next step must start
  // from the saved one, as it did the first time.
  std::copy(s.qacc_warmstart.begin(), s.qacc_warmstart.end(), data_->qacc_warmstart);
}

bool Environment::healthy() const {
  return !spec_.healthy || spec_.healthy(simulation());
}

BatchEnvironment::BatchEnvironment(std::string_view name, int copies) {
  if (copies < 1) throw EnvError("a batch needs at least one environment");
  const EnvironmentDefinition& spec = task(name);
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

std::string episode_end_reason(const EnvironmentDefinition& task, bool terminated) {
  if (!terminated) return "time limit";
  if (task.subtasks) return "every element done";
  if (task.family == "antmaze") return "goal reached";
  if (task.family == "adroit" && task.base == "pen") return "the pen dropped";
  if (task.family == "locomotion") return "the body left its healthy range";
  return "the task ended it";
}

}  // namespace dstudio::env
