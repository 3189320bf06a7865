// Soft Actor-Critic on LibTorch (part of the models library: this file pays for LibTorch).

// Index of this file:
//   [SECTION] Networks, batches and the replay buffer
//   [SECTION] The settings of a run
//   [SECTION] A run
//   [SECTION] Checkpoints
//   [SECTION] Training
//   [SECTION] The replay file
//   [SECTION] Training and reading a run folder
//   [SECTION] Choosing what ships

#include "dstudio/behaviour/sac.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"
#include "dstudio/common/json_fields.h"
#include "dstudio/common/random_fields.h"
#include "dstudio/common/system_info.h"
#include "dstudio/env/antmaze.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint_integrity.h"
#include "dstudio/models/checkpoint_model.h"
#include "policy_json.h"

namespace dstudio::behaviour {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// [SECTION] Networks, batches and the replay buffer

constexpr std::int64_t kUpdateAfter = 1000;  // transitions in the buffer before learning
constexpr std::uint64_t kEvalSeedSalt =
    0xE7A15ACULL;  // evaluation episodes, the same for every snapshot
constexpr double kHalfLog2Pi = 0.91893853320467274178;

// Two hidden ReLU layers, as rlkit's networks for D4RL's behaviour policies.
struct MlpImpl : torch::nn::Module {
  MlpImpl(int in, int hidden, int out)
      : l1(register_module("l1", torch::nn::Linear(in, hidden))),
        l2(register_module("l2", torch::nn::Linear(hidden, hidden))),
        l3(register_module("l3", torch::nn::Linear(hidden, out))) {}
  torch::Tensor forward(const torch::Tensor& x) { return l3(torch::relu(l2(torch::relu(l1(x))))); }
  torch::nn::Linear l1, l2, l3;
};
TORCH_MODULE(Mlp);

// Transitions in preallocated arrays, overwritten oldest first once full.
struct ReplayBuffer {
  int S = 0, A = 0;
  std::int64_t capacity = 0, size = 0, next = 0;
  std::vector<float> obs, act, rew, next_obs, done;

  ReplayBuffer(int s, int a, std::int64_t cap) : S(s), A(a), capacity(cap) {
    obs.resize(static_cast<std::size_t>(cap * S));
    next_obs.resize(static_cast<std::size_t>(cap * S));
    act.resize(static_cast<std::size_t>(cap * A));
    rew.resize(static_cast<std::size_t>(cap));
    done.resize(static_cast<std::size_t>(cap));
  }
  void add(std::span<const float> o, std::span<const float> a, float r, std::span<const float> o2,
           bool terminal) {
    const auto i = static_cast<std::size_t>(next);
    std::copy(o.begin(), o.end(), obs.begin() + i * S);
    std::copy(o2.begin(), o2.end(), next_obs.begin() + i * S);
    std::copy(a.begin(), a.end(), act.begin() + i * A);
    rew[i] = r;
    done[i] = terminal ? 1.0f : 0.0f;
    next = (next + 1) % capacity;
    size = std::min(size + 1, capacity);
  }
  // The columns in the order the replay file holds them, each with its width.
  template <class Buffer, class Visit>
  static void each_column(Buffer& b, Visit&& visit) {
    visit(b.obs, b.S);
    visit(b.next_obs, b.S);
    visit(b.act, b.A);
    visit(b.rew, 1);
    visit(b.done, 1);
  }
};

struct Batch {
  torch::Tensor obs, act, rew, next_obs, done, eps_next, eps_now;
};

// The tanh-squashed Gaussian sample and its log-density, from the actor's raw output and noise.
std::pair<torch::Tensor, torch::Tensor> squashed_sample(const torch::Tensor& out,
                                                        const torch::Tensor& eps, int A) {
  auto parts = out.split(A, 1);
  const auto mean = parts[0];
  const auto log_std = parts[1].clamp(kLogStdMin, kLogStdMax);
  const auto u = mean + log_std.exp() * eps;
  const auto action = torch::tanh(u);
  // log N(u; mean, std) - sum log(1 - tanh(u)^2), the latter in the stable form
  // 2 (log 2 - u - softplus(-2u)).
  const auto gaussian = (-0.5 * eps.pow(2) - log_std - kHalfLog2Pi).sum(1);
  const auto squash = (2.0 * (std::log(2.0) - u - torch::softplus(-2.0 * u))).sum(1);
  return {action, gaussian - squash};
}

// The actor's weights as the acting-side policy, rounded to half precision as it ships.
GaussianPolicy export_actor(Mlp& actor, int S, int A) {
  GaussianPolicy p;
  p.obs_dim = S;
  p.act_dim = A;
  for (auto* l : {&actor->l1, &actor->l2, &actor->l3}) {
    const auto w = (*l)->weight.detach().t().contiguous();  // (in, out)
    const auto b = (*l)->bias.detach().contiguous();
    DenseLayer d;
    d.in = static_cast<int>(w.size(0));
    d.out = static_cast<int>(w.size(1));
    d.weight.assign(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
    d.bias.assign(b.data_ptr<float>(), b.data_ptr<float>() + b.numel());
    p.layers.push_back(std::move(d));
  }
  round_to_half(p);
  return p;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The settings of a run

// SacConfig's fields, each written once: both directions of state.json's "config" and its checks.
const JsonFields<SacConfig>& config_fields() {
  static const auto fields = [] {
    JsonFields<SacConfig> f;
    const NumberRange positive{0.0, std::numeric_limits<double>::infinity(), true};
    const NumberRange fraction{0.0, 1.0};
    f.field("env", &SacConfig::env)
        .field("total_steps", &SacConfig::total_steps, positive)
        .field("hidden", &SacConfig::hidden, positive)
        .field("batch", &SacConfig::batch, positive)
        .field("lr", &SacConfig::lr, positive)
        .field("gamma", &SacConfig::gamma, fraction)
        .field("tau", &SacConfig::tau, fraction)
        .field("random_steps", &SacConfig::random_steps, {0.0})
        .field("replay_size", &SacConfig::replay_size, positive)
        .field("eval_every", &SacConfig::eval_every, positive)
        .field("eval_episodes", &SacConfig::eval_episodes, positive)
        .field("checkpoint_every", &SacConfig::checkpoint_every, positive)
        .field("threads", &SacConfig::threads, positive)
        .field("seed", &SacConfig::seed)
        // Runs from before the penalty have no key: 0, the task's own reward.
        .field("upturn_penalty", &SacConfig::upturn_penalty, {0.0})
        // Runs from before these have neither key, and write neither while they are off.
        .field("upturn_ends", &SacConfig::upturn_ends)
        .written_if([](const SacConfig& c) { return c.upturn_ends; })
        .field("start_from", &SacConfig::start_from)
        .omitted_when_empty();
    return f;
  }();
  return fields;
}

ordered_json config_json(const SacConfig& c) {
  return config_fields().write(c);
}

// What may not change when a run continues (the length, threads and checkpoint interval may).
std::string learning_difference(const SacConfig& saved, const SacConfig& asked) {
  const auto a = config_json(saved), b = config_json(asked);
  std::string diff;
  for (const auto& [key, value] : a.items()) {
    if (key == "total_steps" || key == "threads" || key == "checkpoint_every") continue;
    if (b.at(key) != value)
      diff += (diff.empty() ? "" : ", ") + key + " " + value.dump() + " (asked " +
              b.at(key).dump() + ")";
  }
  return diff;
}

// The environment mid-episode, as a run stopped it.
const JsonFields<env::PhysicsState>& physics_fields() {
  static const auto fields = [] {
    using P = env::PhysicsState;
    JsonFields<P> f;
    f.field("qpos", &P::qpos)
        .required()
        .field("qvel", &P::qvel)
        .required()
        .field("qacc_warmstart", &P::qacc_warmstart)
        .required()
        .field("ctrl", &P::ctrl)
        .required()
        .field("time", &P::time, {0.0})
        .required()
        .field("elapsed_steps", &P::elapsed_steps, {0})
        .required()
        // Runs from before tasks kept a state of their own (a goal) have none.
        .field("task_state", &P::task_state);
    return f;
  }();
  return fields;
}

// state.json: everything a run needs beside its checkpoint and replay buffer to continue exactly.
struct RunState {
  SacConfig config;
  std::string command;
  std::int64_t steps = 0;
  std::uint64_t episode = 0;
  double episode_return = 0.0;
  double alpha = 0.0;  // for people reading the file: the checkpoint holds log alpha
  Random::State act_random, batch_random;
  env::PhysicsState env_state;
  std::vector<float> obs;
  std::vector<std::int64_t> replay_refilled_from;  // steps at which the buffer was refilled
  std::int64_t started_from_steps = -1;            // the steps of config.start_from's checkpoint
  PolicySet policies;
};

const JsonFields<RunState>& run_state_fields() {
  static const auto fields = [] {
    using R = RunState;
    JsonFields<R> f;
    f.constant("format", "dstudio-sac-run-1")
        .object("config", &R::config, config_fields())
        .required()
        .field("command", &R::command)
        .field("steps", &R::steps, {0})
        .required()
        .field("episode", &R::episode)
        .required()
        .field("episode_return", &R::episode_return)
        .required()
        .field("alpha", &R::alpha)
        .object("act_random", &R::act_random, random_state_fields())
        .required()
        .object("batch_random", &R::batch_random, random_state_fields())
        .required()
        .object("env_state", &R::env_state, physics_fields())
        .required()
        .field("obs", &R::obs)
        .required()
        .field("replay_refilled_from", &R::replay_refilled_from, {0})
        .omitted_when_empty()
        .field("started_from_steps", &R::started_from_steps, {0})
        .written_if([](const R& r) { return r.started_from_steps >= 0; })
        .computed(
            "policies", [](const R& r) { return policy_set_to_json(r.policies); },
            [](R& r, const ordered_json& v, const std::string& where) {
              try {
                r.policies = policy_set_from_json(v, false);
              } catch (const Error& e) {
                JsonFields<R>::refuse(where + ": " + e.what());
              }
            })
        .required();
    return f;
  }();
  return fields;
}

// A run folder's state.json, read over `start` (whose command stays when the file has none).
RunState read_run_state(const fs::path& path, RunState start = {}) {
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot be read (not a SAC run folder?)");
  ordered_json j;
  try {
    j = ordered_json::parse(in);
  } catch (const ordered_json::exception& e) {
    throw Error(path.string() + ": not JSON (" + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != "dstudio-sac-run-1")
    throw Error(path.string() + ": not a SAC run");
  return run_state_fields().read(j, path.string(), std::move(start));
}

// ---------------------------------------------------------------------------------------------
// [SECTION] A run

class Sac {
 public:
  Sac(const SacConfig& config, const fs::path& folder)
      : c_(config),
        folder_(folder),
        spec_(training_task(config.env)),
        S_(spec_.obs_dim),
        A_(spec_.act_dim),
        env_(spec_, env::load_model(spec_)),
        buffer_(S_, A_, config.replay_size),
        act_random_(Random::derive(config.seed, 0xAC7)),
        batch_random_(Random::derive(config.seed, 0xBA7C)) {
    torch::manual_seed(config.seed);
    actor_ = Mlp(S_, c_.hidden, 2 * A_);
    q1_ = Mlp(S_ + A_, c_.hidden, 1);
    q2_ = Mlp(S_ + A_, c_.hidden, 1);
    q1_target_ = Mlp(S_ + A_, c_.hidden, 1);
    q2_target_ = Mlp(S_ + A_, c_.hidden, 1);
    copy_into(q1_, q1_target_);
    copy_into(q2_, q2_target_);
    for (auto& p : q1_target_->parameters()) p.requires_grad_(false);
    for (auto& p : q2_target_->parameters()) p.requires_grad_(false);
    log_alpha_ = torch::zeros({1}, torch::requires_grad());
    actor_opt_ = std::make_unique<torch::optim::Adam>(actor_->parameters(),
                                                      torch::optim::AdamOptions(c_.lr));
    auto critic_params = q1_->parameters();
    for (auto& p : q2_->parameters()) critic_params.push_back(p);
    critic_opt_ =
        std::make_unique<torch::optim::Adam>(critic_params, torch::optim::AdamOptions(c_.lr));
    alpha_opt_ = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{log_alpha_},
                                                      torch::optim::AdamOptions(c_.lr));
    target_entropy_ = -static_cast<double>(A_);

    run_.config = c_;
    run_.config.env = spec_.name;
    run_.policies.env = spec_.name;
    run_.policies.algorithm = PolicyAlgorithm::Sac;
    run_.policies.random_steps = c_.random_steps;

    obs_.resize(static_cast<std::size_t>(S_));
    next_obs_.resize(static_cast<std::size_t>(S_));
    action_.resize(static_cast<std::size_t>(A_));
    env_.reset(Random::derive(c_.seed, episode_), obs_);
  }

  // [SECTION] Checkpoints

  bool has_checkpoint() const { return fs::exists(folder_ / "checkpoint.pt"); }

  void load(const std::string& command) {
    RunState start;
    start.command = command;
    const RunState state = read_run_state(folder_ / "state.json", std::move(start));
    if (const auto diff = learning_difference(state.config, c_); !diff.empty())
      throw Error(folder_.string() + " holds a run with other settings: " + diff);
    steps_ = state.steps;
    episode_ = state.episode;
    episode_return_ = state.episode_return;
    act_random_.restore(state.act_random);
    batch_random_.restore(state.batch_random);
    env_.restore_state(state.env_state);
    obs_ = state.obs;
    run_.policies = state.policies;
    run_.steps = steps_;
    run_.command = state.command;

    torch::serialize::InputArchive archive;
    const std::string bytes = models::read_verified_checkpoint(folder_ / "checkpoint.pt");
    archive.load_from(bytes.data(), bytes.size());
    // Modules and optimisers alike read their own nested archive.
    for_each_part([&](const char* name, auto& part) {
      torch::serialize::InputArchive a;
      archive.read(name, a);
      part.load(a);
    });
    torch::Tensor log_alpha, stamp;
    archive.read("log_alpha", log_alpha);
    archive.read("steps", stamp);
    if (stamp.item<std::int64_t>() != steps_)
      throw Error(folder_.string() + ": checkpoint.pt and state.json are from different steps");
    {
      torch::NoGradGuard guard;
      log_alpha_.copy_(log_alpha);
    }
    refilled_from_ = state.replay_refilled_from;
    started_from_steps_ = state.started_from_steps;
    if (fs::exists(folder_ / "replay.bin")) {
      load_buffer(folder_ / "replay.bin", steps_);
    } else {
      // The checkpoint outlived its buffer: learning waits until the actor has refilled it.
      refilled_from_.push_back(steps_);
    }
  }

  // A new run's networks, optimisers, temperature and replay buffer from another run; the rest
  // (steps, random streams, snapshots) begins afresh.
  void start_from(const fs::path& source) {
    const fs::path file = source / "checkpoint.pt";
    if (!fs::exists(file))
      throw UsageError(source.string() + ": no checkpoint.pt to start from (a SAC run folder)");
    torch::serialize::InputArchive archive;
    const std::string bytes = models::read_verified_checkpoint(file);
    archive.load_from(bytes.data(), bytes.size());
    // A module takes the shapes it reads, whatever they are: the shapes are compared after.
    auto shapes = [&] {
      std::vector<std::vector<std::int64_t>> out;
      for (auto* m : {&actor_, &q1_, &q2_, &q1_target_, &q2_target_})
        for (const auto& p : (*m)->parameters()) out.push_back(p.sizes().vec());
      return out;
    };
    const auto expected = shapes();
    const std::string fit = ": its networks do not fit " + spec_.name + " (" + std::to_string(S_) +
                            " observations, " + std::to_string(A_) + " actions, " +
                            std::to_string(c_.hidden) + " hidden units)";
    try {
      for_each_part([&](const char* name, auto& part) {
        torch::serialize::InputArchive a;
        archive.read(name, a);
        part.load(a);
      });
    } catch (const c10::Error& e) {
      throw Error(file.string() + fit + ": " + e.what_without_backtrace());
    }
    if (shapes() != expected) throw Error(file.string() + fit);
    torch::Tensor log_alpha, stamp;
    archive.read("log_alpha", log_alpha);
    archive.read("steps", stamp);
    {
      torch::NoGradGuard guard;
      log_alpha_.copy_(log_alpha);
    }
    started_from_steps_ = stamp.item<std::int64_t>();
    // Its replay buffer too, when it still has one: critics updated on a few fresh transitions
    // alone forget what they knew, and the actor with them.
    if (fs::exists(source / "replay.bin")) load_buffer(source / "replay.bin", started_from_steps_);
  }

  void save() {
    fs::create_directories(folder_);
    {
      torch::serialize::OutputArchive archive;
      for_each_part([&](const char* name, auto& part) {
        torch::serialize::OutputArchive a;
        part.save(a);
        archive.write(name, a);
      });
      archive.write("log_alpha", log_alpha_.detach().clone());
      archive.write("steps", torch::tensor(steps_, torch::kInt64));
      models::save_sealed_archive(archive, folder_ / "checkpoint.pt");
    }
    write_file_atomically(folder_ / "replay.bin", [&](const fs::path& tmp) { save_buffer(tmp); });
    RunState state;
    state.config = c_;
    state.command = run_.command;
    state.steps = steps_;
    state.episode = episode_;
    state.episode_return = episode_return_;
    state.alpha = std::exp(log_alpha_.item<double>());
    state.act_random = act_random_.state();
    state.batch_random = batch_random_.state();
    state.env_state = env_.save_state();
    state.obs = obs_;
    state.replay_refilled_from = refilled_from_;
    state.started_from_steps = started_from_steps_;
    state.policies = run_.policies;
    const ordered_json j = run_state_fields().write(state);
    write_file_atomically(folder_ / "state.json", [&](const fs::path& tmp) {
      std::ofstream out(tmp);
      out << j.dump(1) << "\n";
      if (!out) throw Error(tmp.string() + ": cannot be written");
    });
  }

  // [SECTION] Training

  SacRun train(std::int64_t stop_at, const Progress& progress) {
    const std::int64_t end =
        stop_at > 0 ? std::min(c_.total_steps, steps_ + stop_at) : c_.total_steps;
    auto last_report = steps_;
    while (steps_ < end) {
      act();
      const auto r = env_.step(action_, next_obs_);
      const auto learned = learned_step(c_, env_.qpos(), r.reward, r.terminated);
      buffer_.add(obs_, action_, static_cast<float>(learned.reward), next_obs_, learned.terminal);
      episode_return_ += learned.reward;
      ++steps_;
      if (learned.terminal || r.truncated) {
        last_returns_.push_back(episode_return_);
        if (last_returns_.size() > 10) last_returns_.erase(last_returns_.begin());
        ++episode_;
        episode_return_ = 0.0;
        env_.reset(Random::derive(c_.seed, episode_), obs_);
      } else {
        obs_ = next_obs_;
      }
      if (buffer_.size >= kUpdateAfter) update();
      if (steps_ % c_.eval_every == 0) snapshot();
      if (steps_ % c_.checkpoint_every == 0 && steps_ < end) save();
      if (progress.cancel.cancelled()) {
        save();
        throw Cancelled();
      }
      if (steps_ - last_report >= 1000 || steps_ == end) {
        last_report = steps_;
        progress.update(static_cast<double>(steps_) / static_cast<double>(c_.total_steps),
                        status());
      }
    }
    save();
    run_.steps = steps_;
    return run_;
  }

  void set_command(const std::string& command) {
    if (run_.command.empty()) run_.command = command;
    run_.policies.command = run_.command;
  }

 private:
  // Every network and optimiser of the run, by its name in checkpoint.pt.
  template <typename F>
  void for_each_part(F&& f) {
    f("actor", *actor_);
    f("q1", *q1_);
    f("q2", *q2_);
    f("q1_target", *q1_target_);
    f("q2_target", *q2_target_);
    f("actor_opt", *actor_opt_);
    f("critic_opt", *critic_opt_);
    f("alpha_opt", *alpha_opt_);
  }

  static void copy_into(Mlp& from, Mlp& to) {
    torch::NoGradGuard guard;
    auto src = from->parameters();
    auto dst = to->parameters();
    for (std::size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
  }

  std::string status() const {
    char text[160];
    double recent = 0;
    for (double r : last_returns_) recent += r;
    if (!last_returns_.empty()) recent /= static_cast<double>(last_returns_.size());
    const double last_eval =
        run_.policies.snapshots.empty() ? 0.0 : run_.policies.snapshots.back().behaviour_return;
    std::snprintf(text, sizeof text, "step %lld, training return %.0f, last evaluation %.0f",
                  static_cast<long long>(steps_), recent, last_eval);
    return text;
  }

  // The action taken in the environment: uniform during the warm-up, then a sample of the actor.
  void act() {
    if (steps_ < c_.random_steps) {
      for (auto& a : action_) a = static_cast<float>(act_random_.uniform(-1.0, 1.0));
      return;
    }
    torch::NoGradGuard guard;
    const auto out = actor_->forward(torch::from_blob(obs_.data(), {1, S_}, torch::kFloat32));
    const auto o = out.contiguous();
    const float* v = o.data_ptr<float>();
    for (int j = 0; j < A_; ++j) {
      const float log_std = std::clamp(v[A_ + j], kLogStdMin, kLogStdMax);
      action_[static_cast<std::size_t>(j)] =
          std::tanh(v[j] + std::exp(log_std) * static_cast<float>(act_random_.normal()));
    }
  }

  Batch sample_batch() {
    const int B = c_.batch;
    Batch b{torch::empty({B, S_}), torch::empty({B, A_}), torch::empty({B, 1}),
            torch::empty({B, S_}), torch::empty({B, 1}),  torch::empty({B, A_}),
            torch::empty({B, A_})};
    float* obs = b.obs.data_ptr<float>();
    float* act = b.act.data_ptr<float>();
    float* rew = b.rew.data_ptr<float>();
    float* next = b.next_obs.data_ptr<float>();
    float* done = b.done.data_ptr<float>();
    for (int k = 0; k < B; ++k) {
      const auto i =
          static_cast<std::size_t>(batch_random_.below(static_cast<std::uint64_t>(buffer_.size)));
      std::copy_n(&buffer_.obs[i * S_], S_, obs + static_cast<std::size_t>(k) * S_);
      std::copy_n(&buffer_.next_obs[i * S_], S_, next + static_cast<std::size_t>(k) * S_);
      std::copy_n(&buffer_.act[i * A_], A_, act + static_cast<std::size_t>(k) * A_);
      rew[k] = buffer_.rew[i];
      done[k] = buffer_.done[i];
    }
    for (auto* eps : {&b.eps_next, &b.eps_now}) {
      float* e = eps->data_ptr<float>();
      for (int k = 0; k < B * A_; ++k) e[k] = static_cast<float>(batch_random_.normal());
    }
    return b;
  }

  void update() {
    const Batch b = sample_batch();
    const double alpha = std::exp(log_alpha_.item<double>());

    // Critics: soft Bellman targets from the target networks and a fresh action at s'.
    torch::Tensor target;
    {
      torch::NoGradGuard guard;
      const auto [next_action, next_logp] =
          squashed_sample(actor_->forward(b.next_obs), b.eps_next, A_);
      const auto next_in = torch::cat({b.next_obs, next_action}, 1);
      const auto q_next = torch::min(q1_target_->forward(next_in), q2_target_->forward(next_in)) -
                          alpha * next_logp.unsqueeze(1);
      target = b.rew + c_.gamma * (1.0 - b.done) * q_next;
    }
    const auto in = torch::cat({b.obs, b.act}, 1);
    const auto critic_loss =
        (q1_->forward(in) - target).pow(2).mean() + (q2_->forward(in) - target).pow(2).mean();
    critic_opt_->zero_grad();
    critic_loss.backward();
    critic_opt_->step();

    // Actor: maximise min Q - alpha log pi; the critics only pass gradients through the action.
    for (auto* q : {&q1_, &q2_})
      for (auto& p : (*q)->parameters()) p.requires_grad_(false);
    const auto [action, logp] = squashed_sample(actor_->forward(b.obs), b.eps_now, A_);
    const auto now_in = torch::cat({b.obs, action}, 1);
    const auto q_now = torch::min(q1_->forward(now_in), q2_->forward(now_in)).squeeze(1);
    const auto actor_loss = (alpha * logp - q_now).mean();
    actor_opt_->zero_grad();
    actor_loss.backward();
    actor_opt_->step();
    for (auto* q : {&q1_, &q2_})
      for (auto& p : (*q)->parameters()) p.requires_grad_(true);

    // Temperature: keep the policy's entropy near -|A|.
    const auto alpha_loss = -(log_alpha_ * (logp.detach() + target_entropy_)).mean();
    alpha_opt_->zero_grad();
    alpha_loss.backward();
    alpha_opt_->step();

    // Targets follow the critics slowly.
    torch::NoGradGuard guard;
    for (auto [from, to] : {std::pair{&q1_, &q1_target_}, std::pair{&q2_, &q2_target_}}) {
      auto src = (*from)->parameters();
      auto dst = (*to)->parameters();
      for (std::size_t i = 0; i < src.size(); ++i) dst[i].mul_(1.0 - c_.tau).add_(src[i], c_.tau);
    }
  }

  // Evaluates the actor as it will ship and keeps it on the learning curve.
  void snapshot() {
    PolicySet one;
    one.env = spec_.name;
    one.snapshots.push_back({steps_, 0, 0, export_actor(actor_, S_, A_)});
    const std::uint64_t seed = c_.seed ^ kEvalSeedSalt;
    auto& s = one.snapshots.back();
    s.deterministic_return = evaluate_snapshot(one, 0, c_.eval_episodes, seed, false, c_.threads);
    s.behaviour_return = evaluate_snapshot(one, 0, c_.eval_episodes, seed, true, c_.threads);
    run_.policies.snapshots.push_back(std::move(s));
  }

  // [SECTION] The replay file

  void save_buffer(const fs::path& path) const {
    std::ofstream out(path, std::ios::binary);
    const std::int64_t header[5] = {0x31424C50534143LL /* "CASPLB1" */, S_, A_, buffer_.size,
                                    buffer_.next};
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    out.write(reinterpret_cast<const char*>(&steps_), sizeof steps_);
    ReplayBuffer::each_column(buffer_, [&](const std::vector<float>& v, std::int64_t width) {
      out.write(reinterpret_cast<const char*>(v.data()),
                static_cast<std::streamsize>(buffer_.size * width * sizeof(float)));
    });
    if (!out) throw Error(path.string() + ": cannot be written");
  }

  void load_buffer(const fs::path& path, std::int64_t expected_steps) {
    std::ifstream in(path, std::ios::binary);
    std::int64_t header[5] = {}, steps = -1;
    in.read(reinterpret_cast<char*>(header), sizeof header);
    in.read(reinterpret_cast<char*>(&steps), sizeof steps);
    if (!in || header[0] != 0x31424C50534143LL || header[1] != S_ || header[2] != A_ ||
        header[3] < 0 || header[3] > buffer_.capacity || header[4] < 0 ||
        header[4] >= buffer_.capacity)
      throw Error(path.string() + ": not this run's replay buffer");
    if (steps != expected_steps)
      throw Error(path.string() + ": from step " + std::to_string(steps) +
                  ", the checkpoint is at " + std::to_string(expected_steps));
    buffer_.size = header[3];
    buffer_.next = header[4];
    ReplayBuffer::each_column(buffer_, [&](std::vector<float>& v, std::int64_t width) {
      in.read(reinterpret_cast<char*>(v.data()),
              static_cast<std::streamsize>(buffer_.size * width * sizeof(float)));
    });
    if (!in) throw Error(path.string() + ": cut short");
  }

  SacConfig c_;
  fs::path folder_;
  const env::EnvironmentDefinition& spec_;
  int S_, A_;
  env::Environment env_;
  ReplayBuffer buffer_;
  Random act_random_, batch_random_;
  Mlp actor_{nullptr}, q1_{nullptr}, q2_{nullptr}, q1_target_{nullptr}, q2_target_{nullptr};
  torch::Tensor log_alpha_;
  std::unique_ptr<torch::optim::Adam> actor_opt_, critic_opt_, alpha_opt_;
  double target_entropy_ = 0;
  std::int64_t steps_ = 0;
  std::uint64_t episode_ = 0;
  double episode_return_ = 0;
  std::vector<double> last_returns_;
  std::vector<std::int64_t> refilled_from_;  // steps where a lost replay buffer began again
  std::int64_t started_from_steps_ = -1;
  std::vector<float> obs_, next_obs_, action_;
  SacRun run_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Training and reading a run folder

SacRun train_sac(const SacConfig& config, const fs::path& folder, std::int64_t stop_at,
                 const Progress& progress, const std::string& command) {
  if (config.batch < 1 || config.hidden < 1 || config.total_steps < 1 || config.eval_every < 1 ||
      config.eval_episodes < 1 || config.checkpoint_every < 1 ||
      config.replay_size < config.batch || config.threads < 1)
    throw UsageError(
        "SAC needs positive sizes, steps and intervals, and a replay buffer at least a batch long");
  if (config.upturn_penalty < 0.0 || !std::isfinite(config.upturn_penalty))
    throw UsageError("the upturn penalty is subtracted from the reward: it must be 0 or more");
  if ((config.upturn_penalty != 0.0 || config.upturn_ends) &&
      training_task(config.env).family != "antmaze")
    throw UsageError("the upturn penalty and end read the ant's torso: " + config.env +
                     " is not an antmaze task");
  if (config.upturn_ends && config.gamma >= 1.0)
    throw UsageError(
        "an episode the upturn ends pays the value of staying down, which needs a "
        "discount below 1");
  at::set_num_threads(config.threads);
  set_blas_threads(config.threads);
  Sac sac(config, folder);
  if (sac.has_checkpoint())
    sac.load(command);
  else if (!config.start_from.empty())
    sac.start_from(config.start_from);
  sac.set_command(command);
  return sac.train(stop_at, progress);
}

LearnedStep learned_step(const SacConfig& config, std::span<const double> qpos, double reward,
                         bool terminated) {
  const bool antmaze = config.upturn_penalty != 0.0 || config.upturn_ends;
  if (!antmaze || env::antmaze::torso_up(qpos) >= 0.0) return {reward, terminated};
  const double penalised = reward - config.upturn_penalty;
  if (config.upturn_ends) return {penalised / (1.0 - config.gamma), true};
  return {penalised, terminated};
}

SacRun read_sac_run(const fs::path& folder) {
  RunState state = read_run_state(folder / "state.json");
  SacRun run;
  run.config = state.config;
  run.steps = state.steps;
  run.command = std::move(state.command);
  run.policies = std::move(state.policies);
  return run;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Choosing what ships

PolicySet choose_shipped_policies(
    const SacRun& run, int episodes, int candidates, double medium_fraction, int replay_count,
    int threads, const Progress& progress, std::int64_t medium_after,
    const std::function<double(const PolicySet&, int)>& expert_score) {
  const auto& all = run.policies;
  const int n = static_cast<int>(all.snapshots.size());
  if (n == 0) throw Error("the run has no snapshots yet");
  // Candidates for the expert: the best of the curve by its (short) sampled evaluation, each
  // evaluated again on fresh episodes, so the choice is not a lucky evaluation.
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return all.snapshots[a].behaviour_return > all.snapshots[b].behaviour_return;
  });
  order.resize(static_cast<std::size_t>(std::min(candidates, n)));
  const std::uint64_t fresh = Random::derive(run.config.seed, 0xF4E54);
  int expert = order.front();
  double best = -1e300, best_score = -1e300;
  std::vector<double> fresh_returns(static_cast<std::size_t>(n), 0.0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    progress.update(static_cast<double>(k) / static_cast<double>(order.size()),
                    "choosing the expert");
    const double r = evaluate_snapshot(all, order[k], episodes, fresh, true, threads);
    fresh_returns[static_cast<std::size_t>(order[k])] = r;
    const double score = expert_score ? expert_score(all, order[k]) : r;
    if (score > best_score || (score == best_score && r > best))
      best_score = score, best = r, expert = order[k];
  }
  // Medium: the first snapshot whose sampled return reaches the fraction of the expert's, confirmed
  // on fresh episodes (a short evaluation can be lucky early in training).
  int medium = -1;
  for (int i = 0; i < expert && medium < 0; ++i) {
    if (all.snapshots[i].env_steps < medium_after ||
        all.snapshots[i].behaviour_return < medium_fraction * best)
      continue;
    const double r = evaluate_snapshot(all, i, episodes, fresh, true, threads);
    if (r >= medium_fraction * best * 0.9)
      medium = i, fresh_returns[static_cast<std::size_t>(i)] = r;
  }
  if (medium < 0) medium = expert;

  PolicySet set;
  set.env = all.env;
  set.algorithm = PolicyAlgorithm::Sac;
  set.random_steps = all.random_steps;
  set.command = run.command;
  auto keep = [&](int i) {
    auto s = all.snapshots[static_cast<std::size_t>(i)];
    if (fresh_returns[static_cast<std::size_t>(i)] != 0.0)
      s.behaviour_return = fresh_returns[static_cast<std::size_t>(i)];
    set.snapshots.push_back(std::move(s));
    return static_cast<int>(set.snapshots.size()) - 1;
  };
  // The learner's history before medium, at evenly spread steps, then medium itself.
  std::vector<int> history;
  for (int k = 1; k <= replay_count; ++k) {
    const double at =
        static_cast<double>(all.snapshots[static_cast<std::size_t>(medium)].env_steps) * k /
        (replay_count + 1);
    int nearest = 0;
    for (int i = 0; i < medium; ++i)
      if (std::abs(all.snapshots[i].env_steps - at) <
          std::abs(all.snapshots[nearest].env_steps - at))
        nearest = i;
    if (nearest < medium && (history.empty() || nearest > history.back()))
      history.push_back(nearest);
  }
  for (int i : history) set.replay.push_back(keep(i));
  set.medium = keep(medium);
  set.replay.push_back(set.medium);
  set.expert = expert == medium ? set.medium : keep(expert);
  set.validate();
  return set;
}

}  // namespace dstudio::behaviour
