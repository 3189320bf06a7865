// One episode played step by step, and the same on a thread of its own. See episode_player.h.

// Index of this file:
//   [SECTION] Making a player
//   [SECTION] Playing a step
//   [SECTION] Interventions, forks and branches
//   [SECTION] Traces of an episode
//   [SECTION] The live player's shared state
//   [SECTION] Controlling the live player
//   [SECTION] What readers see
//   [SECTION] The player thread

#include "dstudio/models/episode_player.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "dstudio/analysis/entropy.h"
#include "dstudio/behaviour/d4rl_policy.h"
#include "dstudio/common/error.h"
#include "dstudio/common/system_info.h"
#include "dstudio/common/text.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/intervene.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/windows.h"
#include "policy_window.h"
#include "worker_request.h"

namespace dstudio::models {

// ---------------------------------------------------------------------------------------------
// [SECTION] Making a player

struct EpisodePlayer::State {
  DecisionModel model{nullptr};
  CheckpointInfo info;
  const env::EnvironmentDefinition* spec = nullptr;
  env::ModelPtr physics;
  std::unique_ptr<env::Environment> env;
  // The histories windows are cut from, one row per frame, exactly as rollout keeps them:
  // normalised states, actions (the newest row 0) and returns-to-go divided by the scale.
  std::vector<float> states, actions, rtg;
  double target = 0.0;
  ModalityZeroing zeroing = ModalityZeroing::None;
  std::vector<std::string> interventions;
  std::unique_ptr<InterventionPlan> plan;  // the interventions, ready to run; null for none
  Activations means;                       // the mean ablations' values, once needed
  // Patching from another target: the plan is made at every step, with the patch source the
  // same window at that target (its returns-to-go moved by the difference).
  std::optional<double> patch_target;
  std::vector<Intervention> items;
  InterventionSources sources;
  bool replay = false;
  // A behaviour policy acting instead of a model (EpisodePlayer::behaviour); no context is kept.
  std::shared_ptr<const behaviour::MlpPolicy> mlp;
  bool plain_actions = true;  // compute action_without under interventions
  bool inspect = true;        // keep each step's mixing (else act only)
  VariantConfig no_model;     // what config() reports for a replay

  void push_state(const std::vector<float>& obs) {
    const auto S = obs.size();
    for (std::size_t k = 0; k < S; ++k)
      states.push_back((obs[k] - info.state_mean[k]) / info.state_std[k]);
    actions.resize(actions.size() + static_cast<std::size_t>(spec->act_dim), 0.0f);
  }
};

EpisodePlayer::EpisodePlayer(const std::filesystem::path& checkpoint, const std::string& env_id)
    : EpisodePlayer(open_checkpoint(checkpoint), env_id) {}

EpisodePlayer::EpisodePlayer(const std::shared_ptr<const LoadedCheckpoint>& loaded,
                             const std::string& env_id)
    : s_(new State) {
  const std::filesystem::path& checkpoint = loaded->path;
  s_->model = loaded->model;
  s_->info = loaded->info;
  s_->model->eval();
  const std::string id = env_id.empty() ? s_->info.env_id : env_id;
  if (id.empty())
    throw CheckpointError(checkpoint.string() +
                          ": names no environment; say which one to act in (e.g. hopper)");
  s_->spec = &env::task(id);
  const auto& c = s_->model->config();
  if (c.state_dim != s_->spec->obs_dim || c.act_dim != s_->spec->act_dim) {
    std::string message = checkpoint.string();
    message += ": the model takes states of " + std::to_string(c.state_dim);
    message += " and actions of " + std::to_string(c.act_dim);
    message += "; " + s_->spec->name + " has " + std::to_string(s_->spec->obs_dim);
    message += " and " + std::to_string(s_->spec->act_dim);
    throw env::EnvError(message);
  }
  s_->physics = env::load_model(*s_->spec);
  s_->env = std::make_unique<env::Environment>(*s_->spec, s_->physics);
}

EpisodePlayer::EpisodePlayer() : s_(new State) {}

EpisodePlayer::~EpisodePlayer() = default;

std::unique_ptr<EpisodePlayer> EpisodePlayer::replay(const data::Dataset& dataset, int episode) {
  if (episode < 0 || episode >= static_cast<int>(dataset.episodes.size()))
    throw UsageError("episode " + std::to_string(episode) + " does not exist (the dataset has " +
                     std::to_string(dataset.episodes.size()) + ")");
  if (dataset.env_id.empty())
    throw Error(dataset.path + ": names no environment, so its episodes cannot be replayed");
  const auto& t = dataset.data;
  if (t.qpos_dim == 0 || t.qvel_dim == 0)
    throw Error(dataset.path +
                ": has no infos/qpos and infos/qvel, so its episodes cannot be replayed");
  std::unique_ptr<EpisodePlayer> player(new EpisodePlayer);
  auto& s = *player->s_;
  s.replay = true;
  s.spec = &env::task(dataset.env_id);
  s.physics = env::load_model(*s.spec);
  s.env = std::make_unique<env::Environment>(*s.spec, s.physics);
  s.info.env_id = dataset.env_id;
  s.info.dataset_path = dataset.path;
  if (t.qpos_dim != s.spec->nq || t.qvel_dim != s.spec->nv)
    throw Error(dataset.path + ": its states (qpos " + std::to_string(t.qpos_dim) + ", qvel " +
                std::to_string(t.qvel_dim) + ") do not fit " + s.spec->name + " (" +
                std::to_string(s.spec->nq) + ", " + std::to_string(s.spec->nv) + ")");
  const auto& e = dataset.episodes[static_cast<std::size_t>(episode)];
  const auto n = static_cast<std::size_t>(e.length), first = static_cast<std::size_t>(e.start);
  const auto S = static_cast<std::size_t>(t.obs_dim), A = static_cast<std::size_t>(t.act_dim);
  const auto Q = static_cast<std::size_t>(t.qpos_dim), V = static_cast<std::size_t>(t.qvel_dim);
  double to_go = e.ret, collected = 0.0;
  std::vector<double> recorded_task_state;
  if (s.spec->replayed_task_state && n > 0) {
    std::map<std::string, std::span<const float>> infos;
    for (const auto& [key, info] : t.state_infos)
      infos.emplace(key, std::span<const float>(info.values)
                             .subspan(first * static_cast<std::size_t>(info.dim),
                                      static_cast<std::size_t>(info.dim)));
    const std::vector<double> qpos(t.qpos.begin() + static_cast<std::ptrdiff_t>(first * Q),
                                   t.qpos.begin() + static_cast<std::ptrdiff_t>((first + 1) * Q));
    recorded_task_state = s.spec->replayed_task_state(
        s.physics.get(), qpos, std::span<const float>(t.observations).subspan(first * S, S), infos);
    recorded_task_state.resize(static_cast<std::size_t>(s.spec->task_state_size), 0.0);
  }
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t row = first + k;
    auto f = std::make_shared<PlayerFrame>();
    f->step = static_cast<int>(k);
    f->physics.qpos.assign(t.qpos.begin() + static_cast<std::ptrdiff_t>(row * Q),
                           t.qpos.begin() + static_cast<std::ptrdiff_t>((row + 1) * Q));
    f->physics.qvel.assign(t.qvel.begin() + static_cast<std::ptrdiff_t>(row * V),
                           t.qvel.begin() + static_cast<std::ptrdiff_t>((row + 1) * V));
    f->physics.qacc_warmstart.assign(V, 0.0);
    f->physics.ctrl.assign(A, 0.0);  // the task has one actuator per action dimension
    f->physics.elapsed_steps = static_cast<int>(k);
    // The task's state as the file recorded it (Adroit's infos, from the episode's first step),
    // or the goal the episode was collected towards (AntMaze's infos/goal), for the viewers.
    if (s.spec->replayed_task_state) {
      f->physics.task_state = recorded_task_state;
    } else if (t.goal_dim == s.spec->task_state_size && t.goal_dim > 0)
      f->physics.task_state.assign(
          t.goals.begin() + static_cast<std::ptrdiff_t>(row * t.goal_dim),
          t.goals.begin() + static_cast<std::ptrdiff_t>((row + 1) * t.goal_dim));
    else
      f->physics.task_state.assign(static_cast<std::size_t>(s.spec->task_state_size), 0.0);
    f->observation.assign(t.observations.begin() + static_cast<std::ptrdiff_t>(row * S),
                          t.observations.begin() + static_cast<std::ptrdiff_t>((row + 1) * S));
    f->action.assign(t.actions.begin() + static_cast<std::ptrdiff_t>(row * A),
                     t.actions.begin() + static_cast<std::ptrdiff_t>((row + 1) * A));
    f->reward = t.rewards[row];
    f->return_to_go = to_go;
    f->return_so_far = collected;
    f->target = e.ret;
    f->acted = true;
    f->terminal = k + 1 == n;  // the dataset keeps no state after its last action
    f->terminated = f->terminal && e.end == data::EndReason::Terminal;
    to_go -= f->reward;
    collected += f->reward;
    player->frames_.push_back(std::move(f));
  }
  return player;
}

std::unique_ptr<EpisodePlayer> EpisodePlayer::behaviour(const behaviour::MlpPolicy& policy,
                                                        const std::string& env_id,
                                                        const std::string& name) {
  std::unique_ptr<EpisodePlayer> player(new EpisodePlayer);
  auto& s = *player->s_;
  s.spec = &env::task(env_id);
  policy.validate();
  if (policy.obs_dim != s.spec->obs_dim || policy.act_dim != s.spec->act_dim)
    throw Error(name + ": the behaviour policy takes " + std::to_string(policy.obs_dim) +
                " observations and gives " + std::to_string(policy.act_dim) + " actions; " +
                s.spec->name + " has " + std::to_string(s.spec->obs_dim) + " and " +
                std::to_string(s.spec->act_dim));
  s.mlp = std::make_shared<const behaviour::MlpPolicy>(policy);
  s.inspect = false;
  s.plain_actions = false;
  s.physics = env::load_model(*s.spec);
  s.env = std::make_unique<env::Environment>(*s.spec, s.physics);
  s.info.env_id = s.spec->name;
  s.info.path = name;
  return player;
}

bool EpisodePlayer::isReplay() const {
  return s_->replay;
}
bool EpisodePlayer::isBehaviour() const {
  return s_->mlp != nullptr;
}
const CheckpointInfo& EpisodePlayer::info() const {
  return s_->info;
}
const VariantConfig& EpisodePlayer::config() const {
  return s_->replay || s_->mlp ? s_->no_model : s_->model->config();
}
const env::EnvironmentDefinition& EpisodePlayer::task() const {
  return *s_->spec;
}
const env::ModelPtr& EpisodePlayer::physics_model() const {
  return s_->physics;
}
double EpisodePlayer::dt() const {
  return s_->env->dt();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Playing a step

void EpisodePlayer::reset(std::uint64_t seed, double target, ModalityZeroing zeroing) {
  auto& s = *s_;
  if (s.replay) return;
  seed_ = seed;
  s.target = target;
  s.zeroing = zeroing;
  frames_.clear();
  s.states.clear();
  s.actions.clear();
  s.rtg.clear();
  auto frame = std::make_shared<PlayerFrame>();
  frame->observation.resize(static_cast<std::size_t>(s.spec->obs_dim));
  s.env->reset(seed, frame->observation);
  frame->physics = s.env->save_state();
  if (s.mlp) {
    // Nothing conditions a behaviour policy; the frame keeps the target a checkpoint taking the
    // episode over would aim at.
    frame->return_to_go = frame->target = target;
    frames_.push_back(std::move(frame));
    return;
  }
  s.rtg.push_back(static_cast<float>(target / s.info.rtg_scale));
  frame->return_to_go = static_cast<double>(s.rtg.back()) * s.info.rtg_scale;
  frame->target = target;
  frame->zeroing = zeroing;
  frame->interventions = s.interventions;
  s.push_state(frame->observation);
  frames_.push_back(std::move(frame));
}

bool EpisodePlayer::step() {
  auto& s = *s_;
  if (s.replay) return false;
  if (frames_.empty()) reset(0, first_reference_target(*s.spec, s.info.training.reward_shift));
  if (finished()) return false;
  if (s.mlp) return step_behaviour();
  const auto& c = s.model->config();
  const int t = static_cast<int>(frames_.size()) - 1, K = c.context_length, S = c.state_dim,
            A = c.act_dim;
  const int per_step = c.tokenizer == Tokenizer::Triplet ? 3 : 1;

  auto acted = std::make_shared<PlayerFrame>(*frames_.back());
  {
    torch::InferenceMode inference;
    ModelInputs in = empty_windows(1, K, S, A);
    fill_window_row(in, 0, s.states.data(), s.actions.data(), s.rtg.data(), t, c.max_ep_len);
    // Patches from another target read this step's window at that target.
    const InterventionPlan* plan = s.plan.get();
    std::unique_ptr<InterventionPlan> step_plan;
    if (s.patch_target) {
      ModelInputs other = in;
      const auto shift = static_cast<float>((*s.patch_target - s.target) / s.info.rtg_scale);
      other.returns_to_go = in.returns_to_go + shift * in.mask.unsqueeze(-1);
      InterventionSources sources = s.sources;
      record_activations(*s.model, apply_zeroing(other, s.zeroing), sources.patch);
      step_plan = std::make_unique<InterventionPlan>(s.items, c, std::move(sources));
      plan = step_plan.get();
    }
    if (!s.inspect) {
      // The same arithmetic as with inspection (the whole window, every block), so that a fork
      // with nothing changed plays exactly what the main run plays; only the mixing is not kept.
      const auto all = plan ? plan->forward(*s.model, apply_zeroing(in, s.zeroing))
                            : s.model->forward(in, nullptr, s.zeroing);
      const auto action = all.select(1, K - 1).contiguous();
      acted->action.assign(action.data_ptr<float>(), action.data_ptr<float>() + A);
      acted->entropy = std::numeric_limits<double>::quiet_NaN();
      acted->inspection.reset();
      acted->action_without.clear();
      if (s.plain_actions && (plan || s.zeroing != ModalityZeroing::None)) {
        const auto plain = s.model->forward(in).select(1, K - 1).contiguous();
        acted->action_without.assign(plain.data_ptr<float>(), plain.data_ptr<float>() + A);
      }
    } else {
      Inspection inspection;
      const auto all = plan ? plan->forward(*s.model, apply_zeroing(in, s.zeroing), &inspection)
                            : s.model->forward(in, &inspection, s.zeroing);
      const auto action = all.select(1, K - 1).contiguous();
      acted->action.assign(action.data_ptr<float>(), action.data_ptr<float>() + A);
      acted->action_without.clear();
      if (s.plain_actions && (plan || s.zeroing != ModalityZeroing::None)) {
        const auto plain = s.model->forward(in).select(1, K - 1).contiguous();
        acted->action_without.assign(plain.data_ptr<float>(), plain.data_ptr<float>() + A);
      }

      const int offset = K - std::min(t + 1, K);
      const int T = K * per_step;
      std::vector<char> valid(static_cast<std::size_t>(T));
      for (int k = 0; k < T; ++k) valid[static_cast<std::size_t>(k)] = (k / per_step) >= offset;
      const auto first = inspection.mixing.front().contiguous();
      const auto heads = static_cast<int>(first.size(1));
      acted->entropy = analysis::mean_head_entropy(
          {first.data_ptr<float>(), static_cast<std::size_t>(first.numel())}, heads, T, valid);
      const std::vector<float> mask(in.mask.data_ptr<float>(), in.mask.data_ptr<float>() + K);
      const std::vector<std::int64_t> timesteps(in.timesteps.data_ptr<int64_t>(),
                                                in.timesteps.data_ptr<int64_t>() + K);
      acted->inspection = std::make_shared<const WindowInspection>(inspection_row(
          inspection, 0, mask, timesteps, per_step, c.hidden, /*keep_tokens=*/false));
    }
  }

  auto next = std::make_shared<PlayerFrame>();
  next->observation.resize(static_cast<std::size_t>(S));
  const auto result = s.env->step(acted->action, next->observation);
  acted->acted = true;
  acted->reward = result.reward;
  std::copy(acted->action.begin(), acted->action.end(),
            s.actions.begin() + static_cast<std::ptrdiff_t>(t) * A);

  next->step = t + 1;
  next->physics = s.env->save_state();
  s.rtg.push_back(s.rtg.back() -
                  static_cast<float>(model_reward(result.reward, s.info.training.reward_shift) /
                                     s.info.rtg_scale));
  next->return_to_go = static_cast<double>(s.rtg.back()) * s.info.rtg_scale;
  next->return_so_far = acted->return_so_far + result.reward;
  next->target = s.target;
  next->zeroing = s.zeroing;
  next->interventions = s.interventions;
  next->terminal = result.terminated || result.truncated;
  next->terminated = result.terminated;
  s.push_state(next->observation);
  frames_.back() = std::move(acted);
  frames_.push_back(std::move(next));
  return true;
}

bool EpisodePlayer::step_behaviour() {
  auto& s = *s_;
  auto acted = std::make_shared<PlayerFrame>(*frames_.back());
  // The mean action, clipped as D4RL's expert script clips what it plays.
  acted->action.resize(static_cast<std::size_t>(s.spec->act_dim));
  s.mlp->act(acted->observation, acted->action);
  for (auto& a : acted->action) a = std::clamp(a, -1.0f, 1.0f);
  acted->action_without.clear();
  acted->entropy = std::numeric_limits<double>::quiet_NaN();
  acted->inspection.reset();
  auto next = std::make_shared<PlayerFrame>();
  next->observation.resize(static_cast<std::size_t>(s.spec->obs_dim));
  const auto result = s.env->step(acted->action, next->observation);
  acted->acted = true;
  acted->reward = result.reward;
  next->step = acted->step + 1;
  next->physics = s.env->save_state();
  next->return_so_far = acted->return_so_far + result.reward;
  next->target = s.target;
  next->return_to_go = s.target - next->return_so_far;
  next->terminal = result.terminated || result.truncated;
  next->terminated = result.terminated;
  frames_.back() = std::move(acted);
  frames_.push_back(std::move(next));
  return true;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Interventions, forks and branches

namespace {

// The specs as interventions fitting `config`; refuses what a live player cannot source.
// The specs as interventions fitting `config`; refuses what a live player cannot source. A
// patch from another target (`patch[T]:SITE`, playback.h) sets `patch_target`: every patch of a
// set reads the same second input.
std::vector<Intervention> live_interventions(const std::vector<std::string>& specs,
                                             const VariantConfig& config,
                                             std::optional<double>* patch_target = nullptr) {
  std::vector<Intervention> out;
  std::optional<double> target;
  for (const auto& spec : specs) {
    if (const auto live = parse_live_patch(spec)) {
      auto iv = parse_patch(live->site);
      check_intervention(iv, config);
      if (target && *target != live->target)
        throw UsageError(spec + ": the patches in force read one second input, the window at " +
                         "target " + general_number(*target) + "; patch from one target at a time");
      target = live->target;
      out.push_back(std::move(iv));
      continue;
    }
    auto iv = parse_intervention(spec);
    check_intervention(iv, config);
    if (iv.replacement == Replacement::Resample || iv.replacement == Replacement::Patch)
      throw UsageError(spec + ": needs a second input, which a playing policy does not have " +
                       "(zero or mean ablations, context, modality, steering and patches from " +
                       "another target, patch[T]:SITE, play live)");
    out.push_back(std::move(iv));
  }
  if (patch_target) *patch_target = target;
  return out;
}

}  // namespace

std::unique_ptr<EpisodePlayer> EpisodePlayer::fork(int frame) const {
  const auto& s = *s_;
  std::unique_ptr<EpisodePlayer> out(new EpisodePlayer);
  auto& f = *out->s_;
  f.model = s.model;
  f.info = s.info;
  f.spec = s.spec;
  f.physics = s.physics;
  f.env = std::make_unique<env::Environment>(*s.spec, s.physics);
  f.states = s.states;
  f.actions = s.actions;
  f.rtg = s.rtg;
  f.target = s.target;
  f.zeroing = s.zeroing;
  f.interventions = s.interventions;
  if (s.plan) f.plan = std::make_unique<InterventionPlan>(*s.plan);
  f.items = s.items;
  f.sources = s.sources;
  f.patch_target = s.patch_target;
  f.means = s.means;
  f.replay = s.replay;
  f.mlp = s.mlp;
  f.plain_actions = s.plain_actions;
  f.inspect = s.inspect;
  out->frames_ = frames_;
  out->seed_ = seed_;
  if (s.replay) {
    out->frames_.resize(
        static_cast<std::size_t>(std::clamp(frame, 0, static_cast<int>(frames_.size()) - 1)) + 1);
    return out;
  }
  if (!frames_.empty()) {
    // The conditioning of the frame forked at: what was in force when it acted.
    const auto& at = *frames_[static_cast<std::size_t>(
        std::clamp(frame, 0, static_cast<int>(frames_.size()) - 1))];
    if (at.interventions != f.interventions)
      out->branch(frame, at.target, at.zeroing, at.interventions);
    else
      out->branch(frame, at.target, at.zeroing);
  }
  return out;
}

void EpisodePlayer::continue_from(const EpisodePlayer& from, int frame) {
  auto& s = *s_;
  const auto& f = *from.s_;
  if (s.replay || f.replay || from.frames_.empty())
    throw UsageError("a dataset replay has no policy to hand over to another checkpoint");
  if (s.spec != f.spec)
    throw UsageError(s.info.env_id + "'s policy cannot take over an episode of " + f.spec->name);
  frame = std::clamp(frame, 0, static_cast<int>(from.frames_.size()) - 1);
  const auto n = static_cast<std::size_t>(frame) + 1;
  if (s.mlp) {
    // A behaviour policy acts on the observation alone: the frames and the physics are all.
    frames_.assign(from.frames_.begin(), from.frames_.begin() + static_cast<std::ptrdiff_t>(n));
    seed_ = from.seed_;
    branch(frame, frames_.back()->target, ModalityZeroing::None);
    return;
  }
  const auto A = static_cast<std::size_t>(s.spec->act_dim);
  // The context as this checkpoint normalises it, from what was observed, done and aimed at.
  std::vector<float> states, actions, rtg;
  states.reserve(n * static_cast<std::size_t>(s.spec->obs_dim));
  actions.reserve(n * A);
  for (std::size_t t = 0; t < n; ++t) {
    const auto& fr = *from.frames_[t];
    for (std::size_t k = 0; k < fr.observation.size(); ++k)
      states.push_back((fr.observation[k] - s.info.state_mean[k]) / s.info.state_std[k]);
    if (fr.acted && t + 1 < n)
      actions.insert(actions.end(), fr.action.begin(), fr.action.end());
    else
      actions.resize(actions.size() + A, 0.0f);
    rtg.push_back(static_cast<float>(fr.return_to_go / s.info.rtg_scale));
  }
  s.states = std::move(states);
  s.actions = std::move(actions);
  s.rtg = std::move(rtg);
  s.interventions.clear();
  s.plan.reset();
  s.items.clear();
  s.patch_target.reset();
  frames_.assign(from.frames_.begin(), from.frames_.begin() + static_cast<std::ptrdiff_t>(n));
  seed_ = from.seed_;
  const auto& at = *frames_.back();
  // Re-conditions the frame (it has not acted for this policy) and restores its physics.
  branch(frame, at.target, at.zeroing);
}

void EpisodePlayer::set_inspection(bool on) {
  s_->inspect = on;
}

void EpisodePlayer::set_plain_actions(bool on) {
  s_->plain_actions = on;
}

void EpisodePlayer::check_interventions(const std::vector<std::string>& interventions,
                                        const VariantConfig& config) {
  live_interventions(interventions, config);
}

void EpisodePlayer::branch(int frame, double target, ModalityZeroing zeroing,
                           const std::vector<std::string>& interventions) {
  auto& s = *s_;
  if (s.replay) return;  // the recorded episode is what it is
  if (s.mlp) {
    if (!interventions.empty())
      throw UsageError(interventions.front() + ": a behaviour policy has no layers of a model to " +
                       "intervene on; fork a checkpoint's run instead");
    branch(frame, target, zeroing);
    return;
  }
  const auto& c = s.model->config();
  std::optional<double> patch_target;
  auto items = live_interventions(interventions, c, &patch_target);
  // The sources, gathered before anything changes: a failure leaves the player as it was.
  InterventionSources sources;
  for (const auto& iv : items) {
    if (iv.replacement == Replacement::Mean && s.means.resid.empty()) {
      torch::InferenceMode inference;
      const auto ds = data::load_dataset(checkpoint_dataset(s.info), {.isolate = true});
      record_activations(
          *s.model,
          window_inputs(sample_windows(ds, 64, c.context_length, s.info.training.reward_shift), c,
                        s.info),
          s.means);
      s.means = mean_over_windows(s.means);
    }
    if (iv.site == InterventionSite::Steer && !sources.directions.count(iv.direction))
      sources.directions[iv.direction] = read_direction(iv.direction, s.info);
  }
  sources.mean = s.means;
  std::unique_ptr<InterventionPlan> plan;
  if (!items.empty() && !patch_target) plan = std::make_unique<InterventionPlan>(items, c, sources);
  if (patch_target) {
    // Checked now with a stand-in second input (the window itself), made at each step.
    torch::InferenceMode inference;
    InterventionSources check = sources;
    ModelInputs one = empty_windows(1, c.context_length, c.state_dim, c.act_dim);
    record_activations(*s.model, one, check.patch);
    InterventionPlan(items, c, check);
  }
  s.interventions = interventions;
  s.plan = std::move(plan);
  s.items = std::move(items);
  s.sources = std::move(sources);
  s.patch_target = patch_target;
  branch(frame, target, zeroing);
}

void EpisodePlayer::branch(int frame, double target, ModalityZeroing zeroing) {
  auto& s = *s_;
  if (s.replay) return;  // the recorded episode is what it is
  if (frames_.empty()) {
    reset(seed_, target, zeroing);
    return;
  }
  frame = std::clamp(frame, 0, static_cast<int>(frames_.size()) - 1);
  const auto n = static_cast<std::size_t>(frame) + 1;
  frames_.resize(n);
  if (s.mlp) {
    auto kept = std::make_shared<PlayerFrame>(*frames_.back());
    kept->target = target;
    kept->return_to_go = target - kept->return_so_far;
    kept->zeroing = ModalityZeroing::None;
    kept->interventions.clear();
    if (!kept->terminal) {
      kept->acted = false;
      kept->action.clear();
      kept->reward = 0.0;
    }
    s.target = target;
    s.env->restore_state(kept->physics);
    frames_.back() = std::move(kept);
    return;
  }
  const auto S = static_cast<std::size_t>(s.spec->obs_dim),
             A = static_cast<std::size_t>(s.spec->act_dim);
  s.states.resize(n * S);
  s.actions.resize(n * A);
  std::fill(s.actions.end() - static_cast<std::ptrdiff_t>(A), s.actions.end(), 0.0f);
  s.rtg.resize(n);
  s.target = target;
  s.zeroing = zeroing;

  auto kept = std::make_shared<PlayerFrame>(*frames_.back());
  if (kept->target != target) {
    // What is left of the new target after the model's return so far (its units: shifted).
    const double so_far =
        model_return(kept->return_so_far, kept->step, s.info.training.reward_shift);
    s.rtg.back() = static_cast<float>((target - so_far) / s.info.rtg_scale);
    kept->return_to_go = static_cast<double>(s.rtg.back()) * s.info.rtg_scale;
  }
  kept->target = target;
  kept->zeroing = zeroing;
  kept->interventions = s.interventions;
  // The frame has not acted on these settings yet.
  if (!kept->terminal) {
    kept->acted = false;
    kept->action.clear();
    kept->reward = 0.0;
    kept->entropy = std::numeric_limits<double>::quiet_NaN();
    kept->inspection.reset();
  }
  s.env->restore_state(kept->physics);
  frames_.back() = std::move(kept);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Traces of an episode

std::vector<double> action_change(const PlayerFrame& frame, int act_dim) {
  std::vector<double> out(static_cast<std::size_t>(std::max(0, act_dim)), 0.0);
  if (!frame.acted || frame.action_without.size() != frame.action.size()) return out;
  for (std::size_t j = 0; j < out.size() && j < frame.action.size(); ++j)
    out[j] = static_cast<double>(frame.action[j]) - static_cast<double>(frame.action_without[j]);
  return out;
}

std::vector<double> action_difference(const std::vector<FramePtr>& fork,
                                      const std::vector<FramePtr>& main) {
  std::vector<double> out(fork.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t t = 0; t < fork.size() && t < main.size(); ++t) {
    if (!fork[t]->acted || !main[t]->acted) continue;
    double d = 0.0;
    for (std::size_t j = 0; j < fork[t]->action.size() && j < main[t]->action.size(); ++j)
      d += std::pow(static_cast<double>(fork[t]->action[j] - main[t]->action[j]), 2.0);
    out[t] = std::sqrt(d);
  }
  return out;
}

std::vector<double> joint_trace(const std::vector<FramePtr>& frames, int qpos_index) {
  std::vector<double> out(frames.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t t = 0; t < frames.size(); ++t) {
    const auto& q = frames[t]->physics.qpos;
    if (qpos_index >= 0 && static_cast<std::size_t>(qpos_index) < q.size())
      out[t] = q[static_cast<std::size_t>(qpos_index)];
  }
  return out;
}

FramePtr acted_window(const std::vector<FramePtr>& frames, const FramePtr& shown) {
  if (!shown) return nullptr;
  if (shown->inspection) return shown;
  if (shown->step == 0 || frames.empty()) return nullptr;
  // The frames are consecutive steps from frames.front()->step.
  const long at = static_cast<long>(shown->step) - 1 - frames.front()->step;
  if (at < 0 || at >= static_cast<long>(frames.size())) return nullptr;
  const auto& before = frames[static_cast<std::size_t>(at)];
  return before->step == shown->step - 1 && before->inspection ? before : nullptr;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The live player's shared state

struct LivePlayer::Shared {
  std::shared_ptr<EpisodePlayer> player;  // touched by the player thread only
  mutable std::mutex mutex;
  std::condition_variable wake;
  mutable std::condition_variable changed;  // after every change readers can see
  bool working = false;                     // a step or request runs outside the lock
  // Under `mutex`: what readers see, and the requests the thread applies between steps.
  std::vector<FramePtr> frames;
  int cursor = 0;
  bool playing = false;
  bool finished = false;
  double speed = 1.0;
  std::uint64_t seed = 0;
  std::uint64_t generation = 0;
  std::string error;
  int forward_requests = 0;  // single steps asked for
  // Target or zeroing changed: branch at the frame on screen when it was asked (the earliest,
  // when several requests wait), not wherever the cursor is once the thread gets to it.
  bool reconfigure = false;
  int reconfigure_at = 0;
  double target = 0.0;
  ModalityZeroing zeroing = ModalityZeroing::None;
  std::vector<std::string> interventions;
  bool restart = false;
  std::uint64_t restart_seed = 0;
  bool stop = false;
  // Counterfactual branches: their players are touched by the player thread only.
  struct Branch {
    std::shared_ptr<EpisodePlayer> player;
    std::vector<FramePtr> frames;
    BranchInfo info;
  };
  std::vector<Branch> branches;
  struct ForkRequest {
    int step = 0;
    BranchChange change;
    std::shared_ptr<EpisodePlayer> other;  // another checkpoint's player, opened by the caller
  };
  std::vector<ForkRequest> fork_requests;
  int forks_in_flight = 0;            // taken from fork_requests, not yet in branches
  std::vector<int> remove_requests;   // -1: all
  std::optional<bool> plain_actions;  // asked for, not yet passed on to the players
  bool plain_on = true;               // what the players were last told (player thread)
  std::uint64_t branch_generation = 0;
  std::string fork_error;
  std::thread thread;

  // The frames the clock can reach: the longest of the main run and its branches.
  [[nodiscard]] int reach() const {
    std::size_t n = frames.size();
    for (const auto& b : branches) n = std::max(n, b.frames.size());
    return static_cast<int>(n);
  }
  [[nodiscard]] bool fork_ready(const ForkRequest& r) const {
    return r.step < static_cast<int>(frames.size()) || finished;
  }
  [[nodiscard]] bool all_finished() const {
    return finished && std::all_of(branches.begin(), branches.end(),
                                   [](const Branch& b) { return b.info.finished; });
  }
  // Under the lock: the model's settings changed at the frame on screen.
  void reconfigure_here() {
    reconfigure_at = reconfigure ? std::min(reconfigure_at, cursor) : cursor;
    reconfigure = true;
  }
};

namespace {

// Why a fork at `step` of an episode that ended with `frames` frames is refused.
std::string ended_before(int step, int frames) {
  const int last = frames - 1;
  return "the episode ended at step " + std::to_string(last) +
         (step > last ? ", before step " + std::to_string(step) : std::string()) +
         ": nothing follows to fork; fork at an earlier step, or start a new episode";
}

}  // namespace

std::shared_ptr<EpisodePlayer> make_fork(const EpisodePlayer& main, int at,
                                         const BranchChange& change,
                                         std::shared_ptr<EpisodePlayer> other) {
  at = std::clamp(at, 0, static_cast<int>(main.frames().size()) - 1);
  std::shared_ptr<EpisodePlayer> branch;
  // A behaviour policy named by the change and not yet loaded (a recipe's fork played again).
  if (!other && !change.behaviour.empty())
    other = EpisodePlayer::behaviour(
        behaviour::load_behaviour_policy(change.behaviour, main.task().name), main.task().name,
        change.behaviour);
  if (other) {
    other->continue_from(main, at);
    branch = std::move(other);
  } else {
    branch = main.fork(at);
    branch->set_inspection(false);  // a body beside the main run: it acts, unmapped
  }
  const auto& kept = *branch->frames().back();
  std::vector<std::string> interventions =
      change.clear_interventions ? std::vector<std::string>{} : kept.interventions;
  interventions.insert(interventions.end(), change.interventions.begin(),
                       change.interventions.end());
  branch->branch(at, change.target.value_or(kept.target), change.zeroing.value_or(kept.zeroing),
                 interventions);
  return branch;
}

std::vector<StepConditions> condition_changes(const std::vector<FramePtr>& frames) {
  std::vector<StepConditions> changes;
  for (const auto& f : frames) {
    StepConditions c{f->step, f->target, f->zeroing, f->interventions};
    if (changes.empty() || c.target != changes.back().target ||
        c.zeroing != changes.back().zeroing || c.interventions != changes.back().interventions)
      changes.push_back(std::move(c));
  }
  return changes;
}

void replay_conditions(EpisodePlayer& player, std::uint64_t seed,
                       const std::vector<StepConditions>& changes, int frames,
                       const Progress& progress) {
  if (changes.empty() || changes.front().step != 0)
    throw UsageError("a replayed run is conditioned from step 0");
  const auto& first = changes.front();
  player.reset(seed, first.target, first.zeroing);
  if (!first.interventions.empty())
    player.branch(0, first.target, first.zeroing, first.interventions);
  std::size_t next = 1;
  while (static_cast<int>(player.frames().size()) < frames) {
    progress.update(static_cast<double>(player.frames().size()) / frames, "playing the run");
    if (!player.step()) break;
    // Re-conditioned where the recorded run was: at the newest frame, before it acts.
    const int at = static_cast<int>(player.frames().size()) - 1;
    while (next < changes.size() && changes[next].step < at) ++next;
    if (next < changes.size() && changes[next].step == at) {
      const auto& c = changes[next++];
      player.branch(at, c.target, c.zeroing, c.interventions);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Controlling the live player

LivePlayer::LivePlayer(std::shared_ptr<EpisodePlayer> player) : s_(new Shared) {
  task_ = player->task();
  physics_model_ = player->physics_model();
  info_ = player->info();
  config_ = player->config();
  dt_ = player->dt();
  replay_ = player->isReplay();
  behaviour_ = player->isBehaviour();
  if (player->frames().empty())
    player->reset(0, first_reference_target(task_, info_.training.reward_shift));
  const auto& first = *player->frames().front();
  s_->target = first.target;
  s_->zeroing = first.zeroing;
  s_->interventions = player->frames().back()->interventions;
  s_->seed = player->seed();
  s_->frames = player->frames();
  s_->finished = player->finished();
  s_->cursor = static_cast<int>(s_->frames.size()) - 1;
  s_->player = std::move(player);
  s_->thread = std::thread([this] { run(); });
}

LivePlayer::~LivePlayer() {
  request(*s_, [&] { s_->stop = true; });
  if (s_->thread.joinable()) s_->thread.join();
}

void LivePlayer::play() {
  request(*s_, [&] {
    // Playing a finished episode from its end would do nothing: start from the beginning.
    if (s_->all_finished() && s_->cursor == s_->reach() - 1) s_->cursor = 0;
    s_->playing = true;
  });
}

void LivePlayer::pause() {
  std::lock_guard lock(s_->mutex);
  s_->playing = false;
  s_->changed.notify_all();
}

void LivePlayer::step_forward() {
  request(*s_, [&] {
    s_->playing = false;
    ++s_->forward_requests;
  });
}

void LivePlayer::step_back() {
  std::lock_guard lock(s_->mutex);
  s_->playing = false;
  s_->forward_requests = 0;
  s_->cursor = std::max(0, s_->cursor - 1);
  s_->changed.notify_all();
}

void LivePlayer::seek(int frame) {
  std::lock_guard lock(s_->mutex);
  s_->playing = false;
  s_->forward_requests = 0;
  s_->cursor = std::clamp(frame, 0, s_->reach() - 1);
  s_->changed.notify_all();
}

void LivePlayer::set_speed(double speed) {
  request(*s_, [&] { s_->speed = std::max(0.0, speed); });
}

void LivePlayer::set_target(double target) {
  request(*s_, [&] {
    s_->target = target;
    s_->reconfigure_here();
  });
}

void LivePlayer::set_zeroing(ModalityZeroing zeroing) {
  request(*s_, [&] {
    s_->zeroing = zeroing;
    s_->reconfigure_here();
  });
}

void LivePlayer::set_interventions(const std::vector<std::string>& interventions) {
  if (behaviour_ && !interventions.empty())
    throw UsageError(interventions.front() + ": a behaviour policy has no layers of a model to " +
                     "intervene on");
  if (!replay_ && !behaviour_) EpisodePlayer::check_interventions(interventions, config_);
  request(*s_, [&] {
    s_->interventions = interventions;
    s_->reconfigure_here();
  });
}

std::vector<std::string> LivePlayer::interventions() const {
  std::lock_guard lock(s_->mutex);
  return s_->interventions;
}

void LivePlayer::restart(std::uint64_t seed) {
  request(*s_, [&] {
    s_->restart = true;
    s_->restart_seed = seed;
  });
}

void LivePlayer::fork(int step, const BranchChange& change) {
  if (replay_) throw UsageError("a dataset replay has no policy to fork");
  std::shared_ptr<EpisodePlayer> other;
  if (!change.checkpoint.empty()) {
    // In its own task (a checkpoint naming none is taken to act in this one), which must be
    // this one: two tasks of the same sizes would still be different bodies.
    const auto info = read_checkpoint_info(change.checkpoint);
    if (!info.env_id.empty() && env::task(info.env_id).name != task_.name)
      throw UsageError(change.checkpoint + ": a policy for " + env::task(info.env_id).name +
                       "; the episode is of " + task_.name);
    other = std::make_shared<EpisodePlayer>(change.checkpoint, task_.name);
  } else if (!change.behaviour.empty()) {
    if (!change.interventions.empty())
      throw UsageError(change.label + ": a behaviour policy has no layers of a model to " +
                       "intervene on");
    other = EpisodePlayer::behaviour(behaviour::load_behaviour_policy(change.behaviour, task_.name),
                                     task_.name, change.behaviour);
  } else if (behaviour_) {
    throw UsageError(change.label + ": a behaviour policy is conditioned on nothing; fork its " +
                     "episode with checkpoint=PATH (a model takes over) or behaviour=dapg|FILE");
  }
  std::vector<std::string> interventions =
      change.clear_interventions || other ? std::vector<std::string>{} : this->interventions();
  interventions.insert(interventions.end(), change.interventions.begin(),
                       change.interventions.end());
  if (!(other && other->isBehaviour()))
    EpisodePlayer::check_interventions(interventions, other ? other->config() : config_);
  request(*s_, [&] {
    // A fork of the ended episode's last state, or of a step after it, would play nothing.
    if (s_->finished && step >= static_cast<int>(s_->frames.size()) - 1)
      throw UsageError(ended_before(step, static_cast<int>(s_->frames.size())));
    if (static_cast<int>(s_->branches.size() + s_->fork_requests.size()) + s_->forks_in_flight >=
        kMaxBranches)
      throw UsageError("at most " + std::to_string(kMaxBranches) +
                       " branches play beside the main run; remove one first");
    s_->fork_requests.push_back({step, change, std::move(other)});
  });
}

void LivePlayer::set_plain_actions(bool on) {
  request(*s_, [&] { s_->plain_actions = on; });
}

void LivePlayer::remove_branch(int branch) {
  request(*s_, [&] { s_->remove_requests.push_back(std::max(0, branch)); });
}

void LivePlayer::clear_branches() {
  request(*s_, [&] {
    s_->fork_requests.clear();
    s_->remove_requests.push_back(-1);
  });
}

std::vector<BranchInfo> LivePlayer::branches() const {
  std::lock_guard lock(s_->mutex);
  std::vector<BranchInfo> out;
  for (const auto& b : s_->branches) out.push_back(b.info);
  return out;
}

std::vector<FramePtr> LivePlayer::branch_frames(int branch, int from) const {
  std::lock_guard lock(s_->mutex);
  if (branch < 0 || branch >= static_cast<int>(s_->branches.size())) return {};
  const auto& f = s_->branches[static_cast<std::size_t>(branch)].frames;
  from = std::clamp(from, 0, static_cast<int>(f.size()));
  return {f.begin() + from, f.end()};
}

double LivePlayer::target() const {
  std::lock_guard lock(s_->mutex);
  return s_->target;
}

ModalityZeroing LivePlayer::zeroing() const {
  std::lock_guard lock(s_->mutex);
  return s_->zeroing;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] What readers see

namespace {

// What readers see, with the player's mutex held.
template <typename Shared>
PlaybackState snapshot(const Shared& s) {
  PlaybackState p;
  p.cursor = s.cursor;
  p.frames = s.reach();
  p.playing = s.playing;
  p.finished = s.all_finished();
  p.speed = s.speed;
  p.seed = s.seed;
  p.generation = s.generation;
  p.error = s.error;
  p.busy = s.working || s.forward_requests > 0 || s.reconfigure || s.restart ||
           !s.remove_requests.empty() ||
           std::any_of(s.fork_requests.begin(), s.fork_requests.end(),
                       [&](const auto& r) { return s.fork_ready(r); });
  const auto at = [&](const std::vector<FramePtr>& f) {
    return f.empty() ? nullptr
                     : f[static_cast<std::size_t>(std::min<std::size_t>(
                           static_cast<std::size_t>(s.cursor), f.size() - 1))];
  };
  p.frame = at(s.frames);
  for (const auto& b : s.branches) p.branch_frames.push_back(at(b.frames));
  p.branch_generation = s.branch_generation;
  p.fork_error = s.fork_error;
  return p;
}

}  // namespace

PlaybackState LivePlayer::state() const {
  std::lock_guard lock(s_->mutex);
  return snapshot(*s_);
}

PlaybackState LivePlayer::wait_until(const std::function<bool(const PlaybackState&)>& done,
                                     std::chrono::milliseconds timeout) const {
  const auto until = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(s_->mutex);
  for (auto p = snapshot(*s_);; p = snapshot(*s_))
    if (done(p) || s_->changed.wait_until(lock, until) == std::cv_status::timeout)
      return snapshot(*s_);
}

std::vector<FramePtr> LivePlayer::frames(int from) const {
  std::lock_guard lock(s_->mutex);
  from = std::clamp(from, 0, static_cast<int>(s_->frames.size()));
  return {s_->frames.begin() + from, s_->frames.end()};
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The player thread

// Long on purpose: the player thread's one loop holds the state's lock between requests and lets go
// of it around each piece of work (a restart, a fork, a step); those hand-offs can be checked only
// where they are all in sight.
void LivePlayer::run() {
  at::set_num_threads(1);
  set_blas_threads(1);
  using clock = std::chrono::steady_clock;
  auto& s = *s_;
  auto next_step = clock::now();
  std::unique_lock lock(s.mutex);
  while (!s.stop) {
    s.changed.notify_all();  // whatever the last pass changed
    // Requests first: they change which frames exist.
    if (s.restart || s.reconfigure) {
      const bool restart = s.restart;
      const std::uint64_t seed = s.restart_seed;
      const double target = s.target;
      const ModalityZeroing zeroing = s.zeroing;
      const auto interventions = s.interventions;
      const int cursor = restart ? 0 : s.reconfigure_at;
      s.restart = s.reconfigure = false;
      s.working = true;
      lock.unlock();
      std::string error;
      try {
        if (restart) {
          s.player->reset(seed, target, zeroing);
          // Interventions asked for with the restart (or before it) hold from the first step.
          if (s.player->frames().back()->interventions != interventions)
            s.player->branch(0, target, zeroing, interventions);
        } else
          s.player->branch(cursor, target, zeroing, interventions);
      } catch (const std::exception& e) {
        error = e.what();
      }
      lock.lock();
      s.working = false;
      if (!error.empty()) {
        s.error = error;
        s.playing = false;
      }
      s.frames = s.player->frames();
      if (restart && !s.branches.empty()) {
        s.branches.clear();  // forks of the episode that is gone
        ++s.branch_generation;
      }
      s.cursor = restart ? 0 : std::min(cursor, s.reach() - 1);
      s.finished = s.player->finished();
      s.seed = s.player->seed();
      ++s.generation;
      continue;
    }
    if (s.plain_actions) {
      // Only the player thread touches the players; no step runs now.
      s.plain_on = *s.plain_actions;
      s.player->set_plain_actions(s.plain_on);
      for (auto& b : s.branches) b.player->set_plain_actions(*s.plain_actions);
      s.plain_actions.reset();
      continue;
    }
    if (!s.remove_requests.empty()) {
      for (const int b : s.remove_requests) {
        if (b < 0) s.branches.clear();
        if (b >= 0 && b < static_cast<int>(s.branches.size()))
          s.branches.erase(s.branches.begin() + b);
      }
      s.remove_requests.clear();
      s.cursor = std::min(s.cursor, s.reach() - 1);
      ++s.branch_generation;
      continue;
    }
    // A fork of a step the main run has not reached waits for it.
    const auto ready = std::find_if(s.fork_requests.begin(), s.fork_requests.end(),
                                    [&](const Shared::ForkRequest& r) { return s.fork_ready(r); });
    if (ready != s.fork_requests.end()) {
      auto request = std::move(*ready);
      s.fork_requests.erase(ready);
      ++s.forks_in_flight;
      const int catch_up_to = s.cursor;
      s.working = true;
      lock.unlock();
      std::shared_ptr<EpisodePlayer> branch;
      std::string error;
      const int at = std::clamp(request.step, 0, static_cast<int>(s.player->frames().size()) - 1);
      try {
        // The episode ended before the step asked for, or at it: no state there acts again.
        if (s.player->finished() && request.step >= static_cast<int>(s.player->frames().size()) - 1)
          throw UsageError(ended_before(request.step, static_cast<int>(s.player->frames().size())));
        if (request.other) request.other->set_plain_actions(s.plain_on);
        branch = make_fork(*s.player, at, request.change, std::move(request.other));
        // Forked behind the clock (the main run played on while the fork was asked for): the
        // branch catches up, so that from here on every run steps together.
        while (static_cast<int>(branch->frames().size()) <= catch_up_to && branch->step()) {
        }
      } catch (const std::exception& e) {
        error = request.change.label + ": " + e.what();
        branch.reset();
      }
      lock.lock();
      s.working = false;
      --s.forks_in_flight;
      s.fork_error = error;
      if (branch) {
        Shared::Branch b;
        b.frames = branch->frames();
        b.info.fork_step = at;
        b.info.label = request.change.label;
        b.info.change = request.change;
        b.info.checkpoint = request.change.checkpoint;
        b.info.frames = static_cast<int>(b.frames.size());
        b.info.finished = branch->finished();
        b.player = std::move(branch);
        s.branches.push_back(std::move(b));
        ++s.branch_generation;
      }
      continue;
    }
    const bool single = s.forward_requests > 0;
    if (!single && !s.playing) {
      s.wake.wait(lock);
      next_step = clock::now();
      continue;
    }
    if (!single && s.speed > 0.0) {
      const auto now = clock::now();
      if (now < next_step) {
        s.wake.wait_until(lock, next_step);
        continue;
      }
    }
    if (single) --s.forward_requests;
    // The next step of the clock: every run (the main one, each branch) whose newest frame is at
    // the cursor and has not ended acts; the others have the next frame kept already, or ended.
    const int from = s.cursor;
    std::vector<EpisodePlayer*> acting;
    const auto needs_step = [&](const std::vector<FramePtr>& f, bool finished) {
      return !finished && static_cast<int>(f.size()) == from + 1;
    };
    if (needs_step(s.frames, s.finished)) acting.push_back(s.player.get());
    for (auto& b : s.branches)
      if (needs_step(b.frames, b.info.finished)) acting.push_back(b.player.get());
    if (acting.empty()) {
      if (from + 1 < s.reach())
        ++s.cursor;  // replaying kept frames, at the speed asked for as a played step
      else
        s.playing = false;  // every run has ended
      if (s.cursor == s.reach() - 1 && s.all_finished()) s.playing = false;
      if (!single && s.speed > 0.0) {
        const auto period = std::chrono::duration_cast<clock::duration>(
            std::chrono::duration<double>(dt_ / s.speed));
        next_step = std::max(next_step + period, clock::now() - period);
      }
      continue;
    }
    s.working = true;
    lock.unlock();
    std::string error;
    for (auto* player : acting) {
      try {
        player->step();
      } catch (const std::exception& e) {
        error = e.what();
        break;
      }
    }
    lock.lock();
    s.working = false;
    s.frames = s.player->frames();
    s.finished = s.player->finished();
    for (auto& b : s.branches) {
      b.frames = b.player->frames();
      b.info.frames = static_cast<int>(b.frames.size());
      b.info.finished = b.player->finished();
    }
    if (!error.empty()) {
      s.error = error;
      s.playing = false;
      continue;
    }
    // A request that arrived meanwhile may have moved the cursor; the new frame is shown only
    // when it was where the step began.
    if (s.cursor == from) s.cursor = std::min(from + 1, s.reach() - 1);
    if (s.cursor == s.reach() - 1 && s.all_finished()) s.playing = false;
    if (s.speed > 0.0) {
      const auto period =
          std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(dt_ / s.speed));
      next_step =
          std::max(next_step + period, clock::now() - period);  // no catching up after a stall
    }
  }
}

}  // namespace dstudio::models
