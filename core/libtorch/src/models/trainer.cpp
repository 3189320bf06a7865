// Training runs and checkpoints. See training.h and checkpoint.h.

// Index of this file:
//   [SECTION] Versions and the learning rate
//   [SECTION] Checkpoints
//   [SECTION] A run's folder and metrics
//   [SECTION] The training thread
//   [SECTION] Starting and resuming a run
//   [SECTION] Controlling a run

#include <mujoco/mujoco.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "dstudio/analysis/metrics_row.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/csv.h"
#include "dstudio/common/error.h"
#include "dstudio/common/folder_lock.h"
#include "dstudio/common/system_info.h"
#include "dstudio/data/window_sampler.h"
#include "dstudio/models/checkpoint_description.h"
#include "dstudio/models/checkpoint_integrity.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/train_step.h"
#include "dstudio/models/training.h"
#include "dstudio/models/variant_registry.h"
#include "worker_request.h"

namespace dstudio::models {
namespace fs = std::filesystem;
using nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// [SECTION] Versions and the learning rate

namespace {

std::string software_versions() {
  return studio_version() + ", LibTorch " + TORCH_VERSION + ", MuJoCo " + mj_versionString() +
         ", BLAS " + active_blas_name();
}

double learning_rate_at(const TrainingConfig& c, std::int64_t step) {
  const double warm =
      std::min(1.0, static_cast<double>(step + 1) /
                        static_cast<double>(std::max<std::int64_t>(1, c.warmup_steps)));
  double lr = c.learning_rate * warm;
  if (c.cosine_decay && step >= c.warmup_steps && c.steps > c.warmup_steps) {
    const double progress =
        static_cast<double>(step - c.warmup_steps) / static_cast<double>(c.steps - c.warmup_steps);
    lr = c.learning_rate * 0.5 * (1.0 + std::cos(3.141592653589793 * progress));
  }
  return lr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Checkpoints

// Serialised in memory, so a failing disk cannot leave LibTorch's writer half done; sealed; then
// written whole or not at all, and flushed. A crash or a full disk leaves the previous file.
void save_sealed_archive(torch::serialize::OutputArchive& archive, const fs::path& path) {
  std::string bytes;
  archive.save_to([&bytes](const void* data, std::size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  seal_checkpoint(bytes);
  try {
    write_bytes_atomically(path, bytes);
  } catch (const CheckpointError&) {
    throw;
  } catch (const Error& e) {
    throw CheckpointError(e.what());
  }
}

namespace {

struct LoadedArchive {
  torch::serialize::InputArchive archive;
  CheckpointInfo info;
  DescriptionExtras extras;  // the trainer's streams, or the weights' origin
};

std::atomic<std::uint64_t> g_checkpoint_parses{0};

void load_archive(const fs::path& path, LoadedArchive& out) {
  ++g_checkpoint_parses;
  // Every byte is checked before LibTorch reads any: a damaged file is refused, never half used.
  const std::string bytes = read_verified_checkpoint(path);
  try {
    out.archive.load_from(bytes.data(), bytes.size());
    c10::IValue meta;
    out.archive.read("meta", meta);
    if (!meta.isString())
      throw CheckpointError(path.string() +
                            ": not a Decision Studio checkpoint (no description inside)");
    out.info = checkpoint_info_from_description(path.string(), meta.toStringRef());
    out.extras = description_extras(path.string(), meta.toStringRef());
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    std::string why = e.what();
    why = why.substr(0, why.find('\n'));
    throw CheckpointError(
        path.string() +
        ": cannot be read as a checkpoint; it is truncated, corrupt or of another program (" + why +
        ")");
  }
}

}  // namespace

CheckpointInfo read_checkpoint_info(const fs::path& path) {
  LoadedArchive loaded;
  load_archive(path, loaded);
  return loaded.info;
}

void check_compatible(const CheckpointInfo& info, const data::Dataset& dataset) {
  std::string problems;
  auto add = [&](const std::string& p) { problems += (problems.empty() ? "" : "; ") + p; };
  if (info.variant.state_dim != dataset.data.obs_dim)
    add("state dim " + std::to_string(info.variant.state_dim) + " vs the dataset's " +
        std::to_string(dataset.data.obs_dim));
  if (info.variant.act_dim != dataset.data.act_dim)
    add("action dim " + std::to_string(info.variant.act_dim) + " vs the dataset's " +
        std::to_string(dataset.data.act_dim));
  if (!info.env_id.empty() && !dataset.env_id.empty() && info.env_id != dataset.env_id)
    add("environment " + info.env_id + " vs the dataset's " + dataset.env_id);
  if (!problems.empty())
    throw CheckpointError(info.path + " does not fit " + dataset.path + ": " + problems);
}

std::string checkpoint_description(const CheckpointInfo& info, const std::string& origin) {
  CheckpointInfo described = info;
  described.software = software_versions();
  return checkpoint_description_text(described, std::nullopt, origin);
}

void save_weights_checkpoint(const fs::path& path, DecisionModel& model, const CheckpointInfo& info,
                             const std::string& origin) {
  torch::serialize::OutputArchive archive, weights;
  archive.write("meta", c10::IValue(checkpoint_description(info, origin)));
  model->save(weights);
  archive.write("model", weights);
  save_sealed_archive(archive, path);
}

void write_weights_only(const fs::path& in, const fs::path& out) {
  CheckpointInfo info;
  auto model = load_checkpoint_model(in, &info);
  save_weights_checkpoint(out, model, info,
                          "weights of " + in.string() + " at step " + std::to_string(info.step));
}

std::int64_t checkpoint_parameter_count(const fs::path& path) {
  auto model = load_checkpoint_model(path);
  std::int64_t n = 0;
  for (const auto& p : model->parameters()) n += p.numel();
  return n;
}

DecisionModel load_checkpoint_model(const fs::path& path, CheckpointInfo* info) {
  LoadedArchive loaded;
  load_archive(path, loaded);
  DecisionModel model(loaded.info.variant);
  try {
    torch::serialize::InputArchive weights;
    loaded.archive.read("model", weights);
    model->load(weights);
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw CheckpointError(path.string() + ": its weights do not match its configuration (" +
                          why.substr(0, why.find('\n')) + ")");
  }
  model->eval();
  if (info) *info = loaded.info;
  return model;
}

const CheckpointInfo& info_of(const LoadedCheckpoint& checkpoint) {
  return checkpoint.info;
}

std::shared_ptr<const LoadedCheckpoint> open_checkpoint(const fs::path& path) {
  auto out = std::make_shared<LoadedCheckpoint>();
  out->path = path;
  out->model = load_checkpoint_model(path, &out->info);
  return out;
}

std::uint64_t checkpoint_parse_count() {
  return g_checkpoint_parses.load();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] A run's folder and metrics

namespace {

// What makes a folder a run's: its checkpoints and metrics.
std::vector<fs::path> run_outputs(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    const bool checkpoint = name.rfind("checkpoint", 0) == 0 && it->path().extension() == ".pt";
    if (checkpoint || name == "metrics.csv" || name == "metrics.jsonl") found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The step a metrics line is of: the first CSV field, or the JSON line's "step"; -1 if none.
std::int64_t step_of_csv(const std::string& line) {
  std::int64_t step = -1;
  const auto end = line.find(',');
  const std::string field = line.substr(0, end);
  const auto [at, ec] = std::from_chars(field.data(), field.data() + field.size(), step);
  return ec == std::errc() && at == field.data() + field.size() ? step : -1;
}
std::int64_t step_of_json(const std::string& line) {
  const auto row = analysis::metrics::read_metrics_row(line);
  return row ? row->step : -1;
}

// Keeps the rows up to `step` (and the header): a run stopped between a metrics row and its next
// checkpoint wrote rows its resumption writes again.
void drop_metrics_after(const fs::path& dir, std::int64_t step) {
  const auto trim = [&](const fs::path& file, bool header,
                        std::int64_t (*step_of)(const std::string&)) {
    std::ifstream in(file);
    if (!in) return;
    std::string kept, line;
    bool dropped = false, first = true;
    while (std::getline(in, line)) {
      const bool keep = (header && first) || step_of(line) <= step;
      first = false;
      if (keep)
        kept += line + '\n';
      else
        dropped = true;
    }
    in.close();
    if (dropped) write_text_atomically(file, kept);
  };
  trim(dir / "metrics.csv", true, step_of_csv);
  trim(dir / "metrics.jsonl", false, step_of_json);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The training thread

struct Trainer::State {
  const data::Dataset* dataset = nullptr;
  VariantConfig variant;
  TrainingConfig training;
  fs::path out_dir;
  std::optional<FolderLock> folder_lock;  // the folder is this run's while it lives
  DecisionModel model{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimiser;
  std::unique_ptr<data::WindowSampler> sampler;
  std::unique_ptr<TrainStep> stepper;
  std::int64_t step = 0;
  ordered_json last_metrics = ordered_json::object();

  std::function<void(const TrainingProgress&)> progress;
  EvaluationHook evaluate;

  std::atomic<TrainingState> state{TrainingState::Idle};
  std::atomic<bool> cancel{false}, paused{false};
  std::mutex mutex;  // guards error, last_checkpoint, pause waits
  std::condition_variable wake;
  std::string error;
  fs::path last_checkpoint;
  std::thread thread;

  void build(std::uint64_t seed) {
    torch::manual_seed(seed);
    model = DecisionModel(variant);
    model->train();
    torch::optim::AdamWOptions options(training.learning_rate);
    options.weight_decay(training.weight_decay).betas({training.beta1, training.beta2});
    optimiser = std::make_unique<torch::optim::AdamW>(model->parameters(), options);
    data::SamplerConfig sc;
    sc.context_length = variant.context_length;
    sc.batch_size = training.batch_size;
    sc.rtg_scale = training.rtg_scale;
    sc.reward_shift = training.reward_shift;
    sc.max_ep_len = variant.max_ep_len;
    sc.pct_traj = training.pct_traj;
    sc.seed = seed;
    sampler = std::make_unique<data::WindowSampler>(*dataset, sc);
    stepper =
        std::make_unique<TrainStep>(model, *optimiser, training.grad_clip, training.threads, seed);
  }

  fs::path write_checkpoint(const fs::path& path) {
    const auto rs = sampler->random().state();
    CheckpointInfo info;
    info.variant = variant;
    info.training = training;
    info.dataset_path = dataset->path;
    info.dataset_fingerprint = dataset->fingerprint;
    info.env_id = dataset->env_id;
    info.state_mean = dataset->state_mean;
    info.state_std = dataset->state_std;
    info.rtg_scale = training.rtg_scale;
    info.step = step;
    info.metrics = last_metrics.dump();
    info.software = software_versions();
    TrainerState state{rs, std::vector<RandomStreamState>{}};
    for (const auto& r : stepper->streams()) state.dropout_streams->push_back({r.key, r.counter});
    const std::string meta = checkpoint_description_text(info, state, "");
    torch::serialize::OutputArchive archive, weights, optim;
    archive.write("meta", c10::IValue(meta));
    model->save(weights);
    archive.write("model", weights);
    optimiser->save(optim);
    archive.write("optimizer", optim);
    archive.write("torch_generator", at::detail::getDefaultCPUGenerator().get_state());
    save_sealed_archive(archive, path);
    std::lock_guard lock(mutex);
    last_checkpoint = path;
    return path;
  }

  void log_row(double loss, double lr, double rate, const EvaluationResult& eval) {
    last_metrics = analysis::metrics::metrics_row_json(step, loss, lr, rate, eval);
    const bool fresh = !fs::exists(out_dir / "metrics.csv");
    const auto& columns = analysis::metrics::kTrainerColumns;
    CsvWriter row({columns.begin(), columns.end()}, 6, /*header_line=*/fresh);
    row << step << loss << lr << rate;
    row.end_row();
    std::ofstream(out_dir / "metrics.csv", std::ios::app) << row.text();
    std::ofstream(out_dir / "metrics.jsonl", std::ios::app) << last_metrics.dump() << '\n';
  }

  void fail(const std::string& why) {
    {
      std::lock_guard lock(mutex);
      error = why;
    }
    state = TrainingState::Failed;
  }

  void loop();
};

void Trainer::State::loop() {
  // Parallelism comes from the step's workers, one LibTorch and BLAS thread each (train_step.h).
  at::set_num_threads(1);
  set_blas_threads(1);
  state = TrainingState::Running;
  const auto& c = training;
  const int K = variant.context_length, S = variant.state_dim, A = variant.act_dim;
  auto t_last = std::chrono::steady_clock::now();
  const auto t_start = t_last;
  const std::int64_t start_step = step;
  double loss_sum = 0.0;
  std::int64_t loss_count = 0;
  try {
    while (step < c.steps) {
      if (cancel) {
        state = TrainingState::Cancelled;
        return;
      }
      if (paused) {
        state = TrainingState::Paused;
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return !paused || cancel; });
        state = TrainingState::Running;
        continue;
      }
      // One step of the reference recipe.
      const double lr = learning_rate_at(c, step);
      for (auto& group : optimiser->param_groups())
        static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
      auto batch = sampler->sample();
      const int64_t B = batch.batch;
      ModelInputs in;
      in.states = torch::from_blob(batch.states.data(), {B, K, S}, torch::kFloat).clone();
      in.actions = torch::from_blob(batch.actions.data(), {B, K, A}, torch::kFloat).clone();
      in.returns_to_go = torch::from_blob(batch.returns_to_go.data(), {B, K + 1}, torch::kFloat)
                             .narrow(1, 0, K)
                             .unsqueeze(-1)
                             .clone();
      in.timesteps = torch::from_blob(batch.timesteps.data(), {B, K}, torch::kLong).clone();
      in.mask = torch::from_blob(batch.mask.data(), {B, K}, torch::kFloat).clone();
      const double value = stepper->run(in);
      if (!std::isfinite(value)) {
        std::string where;
        {
          std::lock_guard lock(mutex);
          where = last_checkpoint.empty()
                      ? "no checkpoint was written yet"
                      : "the last good checkpoint is " + last_checkpoint.string();
        }
        fail("the loss became " + std::string(std::isnan(value) ? "NaN" : "infinite") +
             " at step " + std::to_string(step + 1) + "; training stopped and " + where);
        return;
      }
      ++step;
      loss_sum += value;
      ++loss_count;

      EvaluationResult eval;
      if (evaluate && c.eval_every > 0 && step % c.eval_every == 0) {
        torch::NoGradGuard no_grad;
        model->eval();
        eval = evaluate(*model, step);
        model->train();
      }
      if (step % c.log_every == 0 || step == c.steps || !eval.empty()) {
        const auto now = std::chrono::steady_clock::now();
        const double elapsed = std::chrono::duration<double>(now - t_start).count();
        const double rate = static_cast<double>(step - start_step) / std::max(elapsed, 1e-9);
        log_row(loss_sum / static_cast<double>(std::max<std::int64_t>(1, loss_count)), lr, rate,
                eval);
        if (progress)
          progress({step, c.steps,
                    loss_sum / static_cast<double>(std::max<std::int64_t>(1, loss_count)), lr, rate,
                    static_cast<double>(c.steps - step) / std::max(rate, 1e-9)});
        loss_sum = 0.0;
        loss_count = 0;
        t_last = now;
      }
      if (c.checkpoint_every > 0 && step % c.checkpoint_every == 0 && step < c.steps)
        write_checkpoint(out_dir / "checkpoint.pt");
    }
    write_checkpoint(out_dir / "checkpoint.pt");
    state = TrainingState::Finished;
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Starting and resuming a run

Trainer::Trainer() : s_(std::make_unique<State>()) {}

Trainer::Trainer(const data::Dataset& dataset, VariantConfig variant, TrainingConfig training,
                 fs::path out_dir, ExistingRun existing)
    : s_(std::make_unique<State>()) {
  variant.state_dim = static_cast<int>(dataset.data.obs_dim);
  variant.act_dim = static_cast<int>(dataset.data.act_dim);
  variant.validate();
  check_seed(training.seed, "training");
  s_->dataset = &dataset;
  s_->variant = variant;
  s_->training = training;
  s_->out_dir = std::move(out_dir);
  s_->folder_lock.emplace(s_->out_dir);
  if (const auto held = run_outputs(s_->out_dir); !held.empty()) {
    if (existing == ExistingRun::Refuse)
      throw Error(s_->out_dir.string() + " holds a run already (" +
                  held.front().filename().string() + "); continue it with --resume " +
                  (s_->out_dir / "checkpoint.pt").string() +
                  ", start it again with --overwrite, or choose another folder");
    for (const auto& file : held) fs::remove(file);
  }
  s_->build(training.seed);
}

std::unique_ptr<Trainer> Trainer::resume(const data::Dataset& dataset, const fs::path& checkpoint,
                                         fs::path out_dir, std::int64_t steps) {
  LoadedArchive loaded;
  load_archive(checkpoint, loaded);
  const auto& info = loaded.info;
  if (!loaded.extras.trainer)
    throw CheckpointError(
        checkpoint.string() + " holds weights only (" +
        (loaded.extras.origin.empty() ? std::string("no training state") : loaded.extras.origin) +
        "); it can be evaluated and used for predictions, not resumed");
  check_compatible(info, dataset);
  if (steps > 0 && steps < info.step)
    throw UsageError(checkpoint.string() + " is at step " + std::to_string(info.step) +
                     "; the run cannot end earlier, at step " + std::to_string(steps));
  if (info.dataset_fingerprint != dataset.fingerprint)
    throw CheckpointError(checkpoint.string() + " was trained on other data (fingerprint " +
                          info.dataset_fingerprint + "), not on " + dataset.path + " (" +
                          dataset.fingerprint + "); resuming needs the same dataset");
  std::unique_ptr<Trainer> t(new Trainer());
  auto& s = *t->s_;
  s.dataset = &dataset;
  s.variant = info.variant;
  s.training = info.training;
  if (steps > 0) s.training.steps = steps;
  s.out_dir = out_dir.empty() ? checkpoint.parent_path() : std::move(out_dir);
  s.folder_lock.emplace(s.out_dir);
  const auto from = fs::weakly_canonical(fs::absolute(checkpoint).parent_path());
  if (fs::weakly_canonical(fs::absolute(s.out_dir)) != from) {
    if (const auto held = run_outputs(s.out_dir); !held.empty())
      throw Error(s.out_dir.string() + " holds another run (" + held.front().filename().string() +
                  "); resume into its own folder, " + from.string() + ", or into an empty one");
  }
  s.build(info.training.seed);
  try {
    torch::serialize::InputArchive weights, optim;
    loaded.archive.read("model", weights);
    s.model->load(weights);
    loaded.archive.read("optimizer", optim);
    s.optimiser->load(optim);
    torch::Tensor generator;
    loaded.archive.read("torch_generator", generator);
    at::Generator cpu = at::detail::getDefaultCPUGenerator();  // a handle sharing the generator
    std::lock_guard<std::mutex> lock(cpu.mutex());
    cpu.set_state(generator);
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw CheckpointError(checkpoint.string() + ": cannot restore its state (" +
                          why.substr(0, why.find('\n')) + ")");
  }
  const auto& trainer = *loaded.extras.trainer;
  s.sampler->random().restore(trainer.sampler);
  if (!trainer.dropout_streams)
    throw CheckpointError(
        checkpoint.string() +
        ": was written by an earlier version without dropout streams; it cannot be resumed");
  const auto& streams = *trainer.dropout_streams;
  if (streams.size() != s.stepper->streams().size())
    throw CheckpointError(checkpoint.string() + ": has " + std::to_string(streams.size()) +
                          " dropout streams for " + std::to_string(info.training.threads) +
                          " threads");
  for (std::size_t k = 0; k < streams.size(); ++k)
    s.stepper->streams()[k] = {streams[k].key, streams[k].counter};
  s.step = info.step;
  s.last_metrics = ordered_json::parse(info.metrics);
  drop_metrics_after(s.out_dir, s.step);
  s.model->train();
  return t;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Controlling a run

Trainer::~Trainer() {
  if (s_ && s_->thread.joinable()) {
    cancel();
    s_->thread.join();
  }
}

void Trainer::on_progress(std::function<void(const TrainingProgress&)> callback) {
  s_->progress = std::move(callback);
}
void Trainer::on_evaluation(EvaluationHook hook) {
  s_->evaluate = std::move(hook);
}
void Trainer::run() {
  s_->loop();
}
void Trainer::start() {
  if (s_->thread.joinable()) throw std::logic_error("the run was already started");
  s_->state = TrainingState::Running;
  s_->thread = std::thread([this] {
    lower_thread_priority();  // a window showing the run stays responsive
    s_->loop();
  });
}
void Trainer::pause() {
  s_->paused = true;
}
void Trainer::resume() {
  request(*s_, [&] { s_->paused = false; });
}
void Trainer::cancel() {
  request(*s_, [&] { s_->cancel = true; });
}
void Trainer::wait() {
  if (s_->thread.joinable()) s_->thread.join();
}
TrainingState Trainer::state() const {
  return s_->state;
}
std::string Trainer::error() const {
  std::lock_guard lock(s_->mutex);
  return s_->error;
}
std::int64_t Trainer::step() const {
  return s_->step;
}
fs::path Trainer::last_checkpoint() const {
  std::lock_guard lock(s_->mutex);
  return s_->last_checkpoint;
}
fs::path Trainer::save_checkpoint() {
  return s_->write_checkpoint(s_->out_dir / ("checkpoint-" + std::to_string(s_->step) + ".pt"));
}
void Trainer::release_folder() {
  if (s_->thread.joinable()) s_->thread.join();  // the loop no longer writes
  s_->folder_lock.reset();
}
const VariantConfig& Trainer::variant() const {
  return s_->variant;
}
const TrainingConfig& Trainer::training() const {
  return s_->training;
}

}  // namespace dstudio::models
