// dstudio bench train | act | patching: milliseconds per training step, per action (plain or
// intervened) and per patching sweep.

// Index of this file:
//   [SECTION] Training and acting
//   [SECTION] Patching
//   [SECTION] A target-return sweep
//   [SECTION] Predicting
//   [SECTION] The bench commands

#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_two_ways.h"
#include "commands.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/resources.h"
#include "dstudio/common/system_info.h"
#include "dstudio/data/arrays_h5.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/decision_model.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/intervene.h"
#include "dstudio/models/predict.h"
#include "dstudio/models/run_folder.h"
#include "dstudio/models/train_step.h"

namespace dstudio::cli {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Training and acting

struct ModelBenchArgs {
  std::string variant = "dt", merger = "conv", mixer = "pooling", config;
  int batch = 64, state_dim = 11, act_dim = 3, repeats = 20, threads = 1;
  bool json = false;
  std::vector<std::string> intervene;  ///< act: specs applied in a second, interleaved timing
};

models::ModelInputs synthetic_inputs(const models::VariantConfig& c, int batch) {
  models::ModelInputs in;
  in.states = torch::randn({batch, c.context_length, c.state_dim});
  in.actions = torch::rand({batch, c.context_length, c.act_dim}) * 2 - 1;
  in.returns_to_go = torch::rand({batch, c.context_length, 1}) * 3.6;
  in.timesteps = torch::randint(0, c.max_ep_len, {batch, c.context_length});
  in.mask = torch::ones({batch, c.context_length});
  return in;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double peak_rss_mib() {
  return static_cast<double>(peak_rss_bytes()) / (1 << 20);
}

// A benchmark's JSON report, ending as every one here does: the BLAS and the peak memory.
void print_bench_json(nlohmann::ordered_json j) {
  j["blas"] = active_blas_name();
  j["peak_rss_mib"] = peak_rss_mib();
  std::cout << j.dump(2) << std::endl;
}

// The same, with the timed repeats and the threads before those.
void print_bench_json(nlohmann::ordered_json j, int repeats, int threads) {
  j["repeats"] = repeats;
  j["threads"] = threads;
  print_bench_json(std::move(j));
}

// The threads (`how` they are used) and the BLAS lines of a benchmark's text report.
void print_threads_and_blas(int threads, const char* how) {
  std::printf("threads        %d (%s)\n", threads, how);
  std::printf("blas           %s (%s)\n", active_blas_name().c_str(), active_blas().c_str());
}

// The last line of a benchmark's text report.
void print_peak_memory() {
  std::printf("memory         peak rss %.0f MiB\n", peak_rss_mib());
}

// The machine's GEMM throughput at a training step's shapes, measured in the same run so that the
// step's share of it is a ratio of two numbers taken side by side: every worker runs, on its own
// rows (N = batch x tokens / workers), a Linear(H, 4H) then Linear(4H, H) forward and backward,
// which are the step's largest GEMMs (N x H x 4H in its three orientations). Returns GFLOP/s
// summed over the workers.
double gemm_reference(const models::VariantConfig& c, int batch, int workers, int repeats) {
  const int64_t n = static_cast<int64_t>(batch) * c.tokens() / workers, h = c.hidden,
                w = 4 * c.hidden;
  std::vector<double> ms;
  for (int r = 0; r < repeats + 2; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto work = [&] {
      torch::NoGradGuard no_grad;
      auto x = torch::randn({n, h}), w1 = torch::randn({w, h}), w2 = torch::randn({h, w});
      for (int k = 0; k < 3; ++k) {
        auto y = torch::mm(x, w1.t());  // forward
        auto z = torch::mm(y, w2.t());
        auto gy = torch::mm(z, w2);  // input gradients
        auto gx = torch::mm(gy, w1);
        auto g2 = torch::mm(z.t(), y);  // weight gradients
        auto g1 = torch::mm(gy.t(), x);
        (void)gx.data_ptr<float>();
        (void)g1.data_ptr<float>();
        (void)g2.data_ptr<float>();
      }
    };
    std::vector<std::thread> threads;
    for (int k = 1; k < workers; ++k)
      threads.emplace_back([&] {
        at::set_num_threads(1);
        work();
      });
    work();
    for (auto& t : threads) t.join();
    const auto t1 = std::chrono::steady_clock::now();
    if (r >= 2) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  const double flops = 3.0 * 6.0 * 2.0 * static_cast<double>(n * h * w) * workers;
  return flops / (median(ms) * 1e-3) / 1e9;
}

// What a model benchmark measured, in milliseconds after the warm-up.
struct ModelTimings {
  std::vector<double> ms;              ///< a training step, or a plain action
  std::vector<double> inspect_off_ms;  ///< act: the full pass without inspection
  std::vector<double> inspect_on_ms;   ///< act: the full pass with it
  std::vector<double> intervened_ms;   ///< act: the intervened action (--intervene)
};

// The trainer's own step on `in`: --threads workers, each with one LibTorch and BLAS thread.
std::vector<double> time_training_steps(models::DecisionModel& model, const models::ModelInputs& in,
                                        const ModelBenchArgs& a) {
  model->train();
  torch::optim::AdamW optimiser(model->parameters(),
                                torch::optim::AdamWOptions(1e-4).weight_decay(1e-4));
  at::set_num_threads(1);
  set_blas_threads(1);
  models::TrainStep step(model, optimiser, 0.25, a.threads, 0);
  std::vector<double> ms;
  for (int i = 0; i < a.repeats + 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    step.run(in);
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= 3)
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());  // after warm-up
  }
  return ms;
}

// One action on `in` (and the intervened one, with --intervene), then the full pass with
// inspection off and on.
ModelTimings time_acting(models::DecisionModel& model, const models::VariantConfig& c,
                         const models::ModelInputs& in, const ModelBenchArgs& a) {
  ModelTimings t;
  model->eval();
  torch::InferenceMode inference;
  // With --intervene, the plain action and the intervened one alternate, so that both see the
  // same machine and their difference is the intervention's cost.
  std::vector<models::Intervention> specs;
  for (const auto& spec : a.intervene) specs.push_back(models::parse_intervention(spec));
  models::InterventionSources sources;
  if (!specs.empty()) {
    models::Activations recorded;
    models::record_activations(*model, in, recorded);
    sources.mean = models::mean_over_windows(recorded);
    sources.resample = recorded;
  }
  const models::InterventionPlan plan(specs, c, std::move(sources));
  for (int i = 0; i < a.repeats + 10; ++i) {
    for (const bool intervened : {false, true}) {
      if (intervened && plan.empty()) continue;
      const auto t0 = std::chrono::steady_clock::now();
      auto action = intervened ? plan.act(*model, in) : model->act(in);
      (void)action.data_ptr<float>();
      const auto t1 = std::chrono::steady_clock::now();
      if (i >= 10)
        (intervened ? t.intervened_ms : t.ms)
            .push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  }
  // The full pass (every position) with inspection off and on, interleaved so that both see
  // the same machine: off must cost what a pass without inspection costs, on shows its price.
  models::Inspection inspection;
  for (int i = 0; i < a.repeats + 10; ++i) {
    for (const bool inspect : {false, true}) {
      const auto t0 = std::chrono::steady_clock::now();
      auto actions = model->forward(in, inspect ? &inspection : nullptr);
      (void)actions.data_ptr<float>();
      const auto t1 = std::chrono::steady_clock::now();
      if (i >= 10)
        (inspect ? t.inspect_on_ms : t.inspect_off_ms)
            .push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  }
  return t;
}

// A model benchmark's numbers as `bench train` and `bench act` report them.
struct ModelBench {
  bool training = false;
  models::VariantConfig c;
  int batch = 1;
  std::int64_t parameters = 0;
  ModelTimings t;
  double med = 0.0;     ///< the median of t.ms
  double flops = 0.0;   ///< of a step (forward and backward) or of an action's full pass
  double gflops = 0.0;  ///< achieved
  double gemm = 0.0;    ///< train: the machine's GEMM GFLOP/s at the step's shapes
};

void print_model_bench_json(const ModelBenchArgs& a, const ModelBench& b) {
  const auto& c = b.c;
  const auto& ms = b.t.ms;
  nlohmann::ordered_json j = {
      {"benchmark", b.training ? "train" : "act"},
      {"variant", c.variant},
      {"batch", b.batch},
      {"context_length", c.context_length},
      {"hidden", c.hidden},
      {"layers", c.layers},
      {"heads", c.heads},
      {"parameters", b.parameters},
      {"median_ms", b.med},
      {"min_ms", *std::min_element(ms.begin(), ms.end())},
      {"max_ms", *std::max_element(ms.begin(), ms.end())},
      {"repeats", a.repeats},
      {"gflop", b.flops / 1e9},
      {"gflops_per_second", b.gflops},
      {"threads", a.threads},
      {"gemm_gflops_per_second", b.gemm},
      {"share_of_gemm", b.training ? b.gflops / b.gemm : 0.0},
      {"full_pass_inspection_off_ms", b.training ? 0.0 : median(b.t.inspect_off_ms)},
      {"full_pass_inspection_on_ms", b.training ? 0.0 : median(b.t.inspect_on_ms)},
      {"interventions", a.intervene},
      {"intervened_median_ms", b.t.intervened_ms.empty() ? 0.0 : median(b.t.intervened_ms)}};
  print_bench_json(std::move(j));
}

void print_model_bench(const ModelBenchArgs& a, const ModelBench& b) {
  const auto& c = b.c;
  const auto& ms = b.t.ms;
  const bool training = b.training;
  const double med = b.med, flops = b.flops, gflops = b.gflops, gemm = b.gemm;
  std::printf("benchmark      %s\n", training ? "train (forward, backward, clip, AdamW step)"
                                              : "act (one action, no gradient)");
  std::printf(
      "configuration  %s: batch %d, K %d, H %d, %d layers, %d heads, state %d, action %d, %lld "
      "parameters\n",
      c.variant.c_str(), b.batch, c.context_length, c.hidden, c.layers, c.heads, c.state_dim,
      c.act_dim, static_cast<long long>(b.parameters));
  print_threads_and_blas(
      a.threads,
      training ? "workers, each on its own part of the batch with one LibTorch and BLAS thread"
               : "LibTorch and BLAS");
  std::printf("time           median %.2f ms  min %.2f  max %.2f  over %d repeats\n", med,
              *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
              a.repeats);
  std::printf(
      "flops          %.2f GFLOP per %s, %.1f GFLOP/s achieved%s\n", flops / 1e9,
      training ? "step" : "action", gflops,
      training ? ""
               : " (counted as a full pass; acting computes the last block for one position only)");
  if (training)
    std::printf(
        "gemm           %.1f GFLOP/s at the step's shapes (%lld x %d x %d, forward and backward, "
        "%d worker%s): "
        "the step runs at %.0f%% of it\n",
        gemm, static_cast<long long>(static_cast<int64_t>(b.batch) * c.tokens() / a.threads),
        c.hidden, 4 * c.hidden, a.threads, a.threads == 1 ? "" : "s", 100.0 * gflops / gemm);
  if (!training)
    std::printf("full pass      every position: median %.2f ms with inspection off, %.2f ms on\n",
                median(b.t.inspect_off_ms), median(b.t.inspect_on_ms));
  if (!b.t.intervened_ms.empty()) {
    std::string specs;
    for (const auto& spec : a.intervene) specs += (specs.empty() ? "" : " ") + spec;
    std::printf("intervened     %s: median %.3f ms, %+.3f ms against the plain action (%.3f ms)\n",
                specs.c_str(), median(b.t.intervened_ms), median(b.t.intervened_ms) - med, med);
  }
  print_peak_memory();
}

// `bench train` (training steps of batch --batch) or `bench act` (single actions): times a
// freshly made model of the variant on synthetic inputs and reports it.
int run_model_bench(const ModelBenchArgs& a, bool training) {
  at::set_num_threads(a.threads);
  set_blas_threads(a.threads);
  ModelBench b;
  b.training = training;
  b.c = models::make_variant(a.variant, a.merger, a.mixer);
  if (!a.config.empty()) b.c = models::with_overrides(b.c, a.config);
  b.c.state_dim = a.state_dim;
  b.c.act_dim = a.act_dim;
  torch::manual_seed(0);
  models::DecisionModel model(b.c);
  b.batch = training ? a.batch : 1;
  const auto in = synthetic_inputs(b.c, b.batch);
  if (training)
    b.t.ms = time_training_steps(model, in, a);
  else
    b.t = time_acting(model, b.c, in, a);
  b.med = median(b.t.ms);
  b.flops = models::forward_flops(b.c, b.batch) * (training ? 3.0 : 1.0);
  b.gflops = b.flops / (b.med * 1e-3) / 1e9;
  b.gemm = training ? gemm_reference(b.c, b.batch, a.threads, std::max(5, a.repeats / 2)) : 0.0;
  for (const auto& p : model->parameters()) b.parameters += p.numel();
  if (a.json)
    print_model_bench_json(a, b);
  else
    print_model_bench(a, b);
  return kOk;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Patching

// The options of a benchmark that runs a checkpoint on many windows (patching, predict).
struct CheckpointBenchArgs {
  std::string checkpoint;
  int windows = 0, repeats = 0, threads = 2;
  bool json = false;
};

struct PatchingBenchArgs : CheckpointBenchArgs {
  PatchingBenchArgs() { windows = 64, repeats = 5; }
};

// The checkpoint a benchmark runs, --checkpoint or the shipped hopper DT, and its model, with
// LibTorch and BLAS set to --threads threads.
struct BenchCheckpoint {
  std::string path;
  models::DecisionModel model;
};

BenchCheckpoint open_bench_checkpoint(const CheckpointBenchArgs& a) {
  at::set_num_threads(a.threads);
  set_blas_threads(a.threads);
  std::string path = a.checkpoint.empty()
                         ? resource_file("checkpoints/hopper-medium-dt.pt").string()
                         : a.checkpoint;
  models::DecisionModel model = models::open_checkpoint(path)->model;
  return {std::move(path), std::move(model)};
}

// A checkpoint benchmark's JSON report: which benchmark, the checkpoint and its windows, then
// what it `measured`.
void print_checkpoint_bench_json(const char* benchmark, const std::string& path,
                                 const models::VariantConfig& c, const CheckpointBenchArgs& a,
                                 const nlohmann::ordered_json& measured) {
  nlohmann::ordered_json j = {{"benchmark", benchmark},
                              {"checkpoint", path},
                              {"variant", c.variant},
                              {"windows", a.windows},
                              {"context_length", c.context_length}};
  for (const auto& [key, value] : measured.items()) j[key] = value;
  print_bench_json(std::move(j), a.repeats, a.threads);
}

// The layer x token and layer x component patching sweep of a checkpoint, once with the clean
// blocks before each patch reused and the patches batched, once as a whole forward pass per
// patch, alternating so that both see the same machine.
int run_patching_bench(const PatchingBenchArgs& a) {
  auto [path, model] = open_bench_checkpoint(a);
  const auto& c = model->config();
  // Synthetic windows of the checkpoint's shapes: a pass costs the same whatever the values.
  torch::manual_seed(0);
  const auto clean = synthetic_inputs(c, a.windows), other = synthetic_inputs(c, a.windows);
  std::vector<double> reuse_ms, rerun_ms, forward_ms;
  double difference = 0.0;
  int64_t patches = 0, stream_patches = 0;
  for (int r = 0; r < a.repeats + 1; ++r) {
    models::PatchingSweep fast, slow;
    for (const bool reuse : {true, false}) {
      const auto t0 = std::chrono::steady_clock::now();
      auto sweep = models::patching_sweep(*model, clean, other, reuse);
      const auto t1 = std::chrono::steady_clock::now();
      if (r > 0)  // the first round warms up
        (reuse ? reuse_ms : rerun_ms)
            .push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      (reuse ? fast : slow) = std::move(sweep);
    }
    {
      // One plain forward pass of the windows: what a whole rerun per patch costs at least.
      torch::InferenceMode inference;
      const auto t0 = std::chrono::steady_clock::now();
      auto actions = model->forward(clean);
      (void)actions.data_ptr<float>();
      const auto t1 = std::chrono::steady_clock::now();
      if (r > 0) forward_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    difference = std::max({difference, (fast.stream - slow.stream).abs().max().item<double>(),
                           (fast.components - slow.components).abs().max().item<double>()});
    stream_patches = fast.stream.size(0) * fast.stream.size(1);
    patches = stream_patches + fast.components.size(0);
  }
  const double reuse = median(reuse_ms), rerun = median(rerun_ms);
  if (a.json) {
    print_checkpoint_bench_json("patching", path, c, a,
                                {{"layers", c.layers},
                                 {"tokens", c.tokens()},
                                 {"stream_patches", stream_patches},
                                 {"patches", patches},
                                 {"reuse_median_ms", reuse},
                                 {"rerun_median_ms", rerun},
                                 {"speedup", rerun / reuse},
                                 {"largest_difference", difference}});
    return kOk;
  }
  std::printf(
      "benchmark      patching (every stream position after every block, and every head, mixer "
      "and MLP, patched from a second input)\n");
  std::printf(
      "configuration  %s (%s): K %d, %lld tokens, %d layers; %d windows; %lld patches (%lld of the "
      "stream)\n",
      c.variant.c_str(), path.c_str(), c.context_length, static_cast<long long>(c.tokens()),
      c.layers, a.windows, static_cast<long long>(patches), static_cast<long long>(stream_patches));
  print_threads_and_blas(a.threads, "LibTorch and BLAS");
  std::printf(
      "reuse          median %.0f ms: the blocks before each patch reused, patches batched\n",
      reuse);
  std::printf(
      "rerun          median %.0f ms: one whole forward pass per patch (%.1f ms each; a "
      "plain pass of the windows %.1f ms)\n",
      rerun, rerun / static_cast<double>(patches), median(forward_ms));
  std::printf("speedup        %.1fx over %d repeats, alternating; largest difference %.2g\n",
              rerun / reuse, a.repeats, difference);
  print_peak_memory();
  return kOk;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] A target-return sweep

// A target-return sweep as the analyses run it: targets x episodes in lockstep, on an environment
// that never terminates early (halfcheetah), so that every episode runs its 1000 steps.
int run_eval_bench(const ModelBenchArgs& a, const std::string& env_id, int targets, int episodes) {
  auto c = models::make_variant(a.variant, a.merger, a.mixer);
  if (!a.config.empty()) c = models::with_overrides(c, a.config);
  const auto& spec = env::task(env_id);
  c.state_dim = spec.obs_dim;
  c.act_dim = spec.act_dim;
  torch::manual_seed(0);
  models::DecisionModel model(c);
  models::CheckpointInfo info;
  info.variant = c;
  info.env_id = spec.name;
  info.state_mean.assign(static_cast<std::size_t>(c.state_dim), 0.0f);
  info.state_std.assign(static_cast<std::size_t>(c.state_dim), 1.0f);
  models::RolloutConfig config;
  for (int k = 0; k < targets; ++k) config.targets.push_back(1000.0 * (k + 1));
  config.episodes = episodes;
  config.threads = a.threads;
  config.traces = false;
  std::vector<double> seconds;
  std::int64_t steps = 0;
  for (int r = 0; r < a.repeats; ++r) {
    const auto result = models::rollout(*model, info, config);
    seconds.push_back(result.seconds);
    steps = result.env_steps;
  }
  const double med = median(seconds);
  if (a.json) {
    nlohmann::ordered_json j = {{"benchmark", "eval"},  {"variant", c.variant},
                                {"env", spec.name},     {"targets", targets},
                                {"episodes", episodes}, {"context_length", c.context_length},
                                {"env_steps", steps},   {"median_seconds", med}};
    print_bench_json(std::move(j), a.repeats, a.threads);
    return kOk;
  }
  std::printf(
      "benchmark      eval (a target-return sweep: one batched forward pass per step, episodes in "
      "lockstep)\n");
  std::printf(
      "configuration  %s (K %d, H %d, %d layers) on %s: %d targets x %d episodes, %lld env steps\n",
      c.variant.c_str(), c.context_length, c.hidden, c.layers, spec.name.c_str(), targets, episodes,
      static_cast<long long>(steps));
  print_threads_and_blas(a.threads, "parts of the batch on their own cores");
  std::printf(
      "time           median %.1f s  min %.1f  max %.1f  over %d repeats; %.0f env steps/s\n", med,
      *std::min_element(seconds.begin(), seconds.end()),
      *std::max_element(seconds.begin(), seconds.end()), a.repeats,
      static_cast<double>(steps) / med);
  print_peak_memory();
  return kOk;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Predicting

namespace {

struct PredictBenchArgs : CheckpointBenchArgs {
  PredictBenchArgs() { windows = 20000, repeats = 3; }
  bool action_lens = false;
};

// The options every benchmark here takes: --repeats (up to `most_repeats`), --threads, --json.
void add_timing_options(CLI::App* cmd, int& repeats, int most_repeats, int& threads, bool& json) {
  cmd->add_option("--repeats", repeats, "Timed repeats")
      ->check(whole_number(1, most_repeats))
      ->capture_default_str();
  cmd->add_option("--threads", threads, "Threads")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  cmd->add_flag("--json", json, "Print one JSON object");
}

// `bench <name>`: a checkpoint benchmark's shared options (--checkpoint, --windows up to
// `most_windows`, --repeats, --threads, --json), then `run` on them.
template <typename Args>
CLI::App* add_checkpoint_bench(CLI::App* bench, const std::string& name,
                               const std::string& description, int most_windows,
                               const std::shared_ptr<Args>& a, int (*run)(const Args&),
                               int& exit_code) {
  auto* cmd = bench->add_subcommand(name, description);
  cmd->add_option("--checkpoint", a->checkpoint, "Checkpoint (default: the shipped hopper DT)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--windows", a->windows, "Windows")
      ->check(whole_number(1, most_windows))
      ->capture_default_str();
  add_timing_options(cmd, a->repeats, 100, a->threads, a->json);
  cmd->callback([&exit_code, a, run] {
    int measured = kOk;
    exit_code = run_guarded([&] { measured = run(*a); });
    if (exit_code == kOk) exit_code = measured;
  });
  return cmd;
}

data::NdArray array_of(const torch::Tensor& t) {
  const auto c = t.contiguous().to(torch::kDouble);
  data::NdArray out;
  out.shape.assign(c.sizes().begin(), c.sizes().end());
  out.values.assign(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  out.dtype = t.scalar_type() == torch::kLong ? "int64" : "float32";
  return out;
}

// `dstudio predict` on a file of synthetic windows of the checkpoint's shapes, as the command runs
// it (reading, the windows a part at a time, writing), beside one forward pass of every window at
// once in memory (what predict did before it took them a part at a time), alternating.
int run_predict_bench(const PredictBenchArgs& a) {
  auto [path, model] = open_bench_checkpoint(a);
  const auto& c = model->config();
  torch::manual_seed(0);
  const auto in = synthetic_inputs(c, a.windows);
  const auto folder = std::filesystem::temp_directory_path() /
                      ("dstudio-bench-predict-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  struct Cleanup {
    std::filesystem::path folder;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(folder, ec);
    }
  } cleanup{folder};
  const auto input = folder / "windows.h5", output = folder / "predicted.h5";
  data::write_nd_arrays(input, {{"states", array_of(in.states)},
                                {"actions", array_of(in.actions)},
                                {"returns_to_go", array_of(in.returns_to_go)},
                                {"timesteps", array_of(in.timesteps)}});
  models::PredictOptions options;
  options.normalize = false;
  options.threads = a.threads;
  options.action_lens = a.action_lens;
  std::vector<double> parted_s, whole_s;
  for (int r = 0; r < a.repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    models::predict_file(path, input, output, options);
    auto t1 = std::chrono::steady_clock::now();
    parted_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    torch::InferenceMode inference;
    t0 = std::chrono::steady_clock::now();
    auto actions = model->forward(in);
    if (a.action_lens) actions = models::action_lens(*model, in);
    (void)actions.data_ptr<float>();
    t1 = std::chrono::steady_clock::now();
    whole_s.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  const double parted = median(parted_s), whole = median(whole_s);
  if (a.json) {
    print_checkpoint_bench_json("predict", path, c, a,
                                {{"part", models::kPredictPart},
                                 {"action_lens", a.action_lens},
                                 {"predict_median_s", parted},
                                 {"all_at_once_median_s", whole},
                                 {"speedup", whole / parted}});
    return kOk;
  }
  std::printf("benchmark      predict (read the windows, run them %lld at a time, write)%s\n",
              static_cast<long long>(models::kPredictPart),
              a.action_lens ? " with the action lens" : "");
  std::printf("configuration  %s (%s): K %d, %d windows\n", c.variant.c_str(), path.c_str(),
              c.context_length, a.windows);
  print_threads_and_blas(a.threads, "LibTorch and BLAS");
  std::printf("predict        median %.2f s (%.2f ms a window)\n", parted,
              1e3 * parted / a.windows);
  std::printf("all at once    median %.2f s: one forward pass of every window in memory\n", whole);
  std::printf("speedup        %.1fx over %d repeats, alternating\n", whole / parted, a.repeats);
  print_peak_memory();
  return kOk;
}

// Listing run folders that hold only a checkpoint (a sweep's cells, `dstudio train --out`): the
// description read from the checkpoint's header, as listings do, against the whole file read and
// verified, as loading the weights does. Time and bytes read, alternating, in one run.
int run_listing_bench(const TwoWaysArgs& a) {
  namespace fs = std::filesystem;
  const fs::path source = bench_checkpoint(a);
  const fs::path root =
      fs::temp_directory_path() / ("dstudio-listing-bench-" + std::to_string(::getpid()));
  fs::create_directories(root);
  std::vector<fs::path> dirs;
  for (int i = 0; i < a.count; ++i) {
    dirs.push_back(root / ("dt-seed" + std::to_string(i) + "-20260101-000000"));
    fs::create_directories(dirs.back());
    fs::copy_file(source, dirs.back() / "checkpoint.pt");
    // A run's log, one line: what a listing reads beside the checkpoint.
    write_text_atomically(dirs.back() / "metrics.jsonl", "{\"step\": 1, \"loss\": 0.5}\n");
  }
  const auto measured = time_two_ways(
      a.repeats,
      [&] {
        for (const auto& dir : dirs)
          if (models::read_run_folder(dir).label != "dt")
            throw Error(dir.string() + ": the listing did not read the checkpoint's variant");
      },
      [&] {
        for (const auto& dir : dirs)
          if (models::read_checkpoint_info(dir / "checkpoint.pt").variant.variant != "dt")
            throw Error(dir.string() + ": the full read did not give the checkpoint's variant");
      });
  fs::remove_all(root);
  print_two_ways(std::to_string(a.count) + " run folders, each a copy of " +
                     source.filename().string() + " (" + byte_size_text(fs::file_size(source)) +
                     ")",
                 "header", "whole file", "run", a.count, a.repeats, measured);
  return kOk;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The bench commands

void add_model_bench_commands(CLI::App& app, int& exit_code) {
  auto* bench = app.get_subcommand("bench");
  {
    auto* cmd = bench->add_subcommand(
        "eval", "Seconds for a target-return sweep: targets x episodes x 1000 steps");
    auto a = std::make_shared<ModelBenchArgs>();
    a->repeats = 1;
    a->threads = 2;
    auto env_id = std::make_shared<std::string>("halfcheetah");
    auto counts = std::make_shared<std::pair<int, int>>(6, 10);
    cmd->add_option("--variant", a->variant, "Variant")->capture_default_str();
    cmd->add_option("--merger", a->merger, "hier: merger")->capture_default_str();
    cmd->add_option("--mixer", a->mixer, "hier: mixer")->capture_default_str();
    cmd->add_option("--config", a->config, "JSON overrides of the variant")->check(json_object());
    cmd->add_option("--env", *env_id, "Environment")
        ->capture_default_str()
        ->check(known_environment());
    cmd->add_option("--targets", counts->first, "Target returns")
        ->capture_default_str()
        ->check(whole_number(1, 100));
    cmd->add_option("--episodes", counts->second, "Episodes per target")
        ->capture_default_str()
        ->check(whole_number(1, 1000));
    add_timing_options(cmd, a->repeats, 100, a->threads, a->json);
    cmd->callback([&exit_code, a, env_id, counts] {
      try {
        exit_code = run_eval_bench(*a, *env_id, counts->first, counts->second);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "dstudio: error: %s\n", e.what());
        exit_code = kUsage;
      }
    });
  }
  for (const bool training : {true, false}) {
    auto* cmd = bench->add_subcommand(
        training ? "train" : "act",
        training ? "Milliseconds per training step of a variant (hopper shapes)"
                 : "Milliseconds per action at inference (batch 1)");
    auto a = std::make_shared<ModelBenchArgs>();
    cmd->add_option("--variant", a->variant, "Variant")->capture_default_str();
    cmd->add_option("--merger", a->merger, "hier: merger")->capture_default_str();
    cmd->add_option("--mixer", a->mixer, "hier: mixer")->capture_default_str();
    cmd->add_option("--config", a->config, "JSON overrides of the variant")->check(json_object());
    if (training)
      cmd->add_option("--batch", a->batch, "Batch size")
          ->check(whole_number(1, 4096))
          ->capture_default_str();
    add_timing_options(cmd, a->repeats, 10000, a->threads, a->json);
    if (!training)
      cmd->add_option("--intervene", a->intervene,
                      "An intervention (repeatable): its action is timed beside the plain one");
    cmd->callback([&exit_code, a, training] {
      int measured = kOk;
      exit_code = run_guarded([&] { measured = run_model_bench(*a, training); });
      if (exit_code == kOk) exit_code = measured;
    });
  }
  {
    auto a = std::make_shared<PredictBenchArgs>();
    add_checkpoint_bench(bench, "predict",
                         "Seconds for dstudio predict on many windows, against all of them at once",
                         200000, a, &run_predict_bench, exit_code)
        ->add_flag("--action-lens", a->action_lens, "Also the action lens of every window");
  }
  add_two_ways_bench(bench, "run-listing",
                     "Listing run folders: the checkpoints' descriptions read from their headers, "
                     "against whole files",
                     "--runs", "Run folders", "folder", &run_listing_bench, exit_code);
  add_checkpoint_bench(bench, "patching",
                       "Milliseconds for a whole patching sweep, reusing blocks against rerunning",
                       4096, std::make_shared<PatchingBenchArgs>(), &run_patching_bench, exit_code);
}

}  // namespace dstudio::cli
