// Relay-policy-learning's kitchen demonstrations replayed into D4RL's kitchen layout. See
// kitchen_demos.h; D4RL: adept_envs/utils/parse_demos.py (gather_training_data) and
// scripts/generation/generate_kitchen_datasets.py.

#include "dstudio/behaviour/kitchen_demos.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "dstudio/common/error.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "dstudio/env/kitchen.h"

namespace dstudio::behaviour {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kHeaderBytes = 7 * 4;
// Counts beyond these are no MuJoCo model's log but a damaged or foreign file.
constexpr std::int32_t kMaxCount = 1 << 20;
constexpr std::int32_t kMaxName = 1 << 16;

[[noreturn]] void refuse(const fs::path& file, std::int64_t offset, const std::string& problem) {
  throw data::DatasetError(
      file.string(), "",
      "at byte offset " + std::to_string(offset) + ": " + problem + " (not a whole .mjl log)");
}

std::int32_t int32_at(const std::vector<char>& bytes, std::int64_t offset) {
  std::uint32_t u = 0;
  for (int k = 3; k >= 0; --k)
    u = (u << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(offset + k)]);
  std::int32_t v;
  std::memcpy(&v, &u, 4);
  return v;
}

float float_at(const std::vector<char>& bytes, std::int64_t offset) {
  const std::int32_t i = int32_at(bytes, offset);
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}

// The logs an input names: a file, a folder's logs, or its folders' logs (for
// kitchen-complete, only D4RL's "*microwave_kettle_switch_slide" folders), each in name order.
std::vector<fs::path> logs_of(const fs::path& input, bool complete_only) {
  std::error_code ec;
  if (fs::is_regular_file(input, ec)) return {input};
  if (!fs::is_directory(input, ec))
    throw UsageError(input.string() + ": no such .mjl file or folder");
  std::vector<fs::path> logs, folders;
  for (const auto& entry : fs::directory_iterator(input, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".mjl")
      logs.push_back(entry.path());
    else if (entry.is_directory())
      folders.push_back(entry.path());
  }
  std::sort(logs.begin(), logs.end());
  if (!logs.empty()) return logs;
  std::sort(folders.begin(), folders.end());
  const std::string suffix = "microwave_kettle_switch_slide";
  for (const auto& folder : folders) {
    const std::string name = folder.filename().string();
    if (complete_only && (name.size() < suffix.size() ||
                          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0))
      continue;
    std::vector<fs::path> inner;
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".mjl")
        inner.push_back(entry.path());
    std::sort(inner.begin(), inner.end());
    logs.insert(logs.end(), inner.begin(), inner.end());
  }
  return logs;
}

}  // namespace

MjlLog read_mjl(const fs::path& file, int skip) {
  if (skip < 1) throw UsageError("the records skipped per step must be at least 1");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw data::DatasetError(file.string(), "", "cannot be opened");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto size = static_cast<std::int64_t>(bytes.size());
  if (size < kHeaderBytes)
    refuse(file, size,
           "the file ends after " + std::to_string(size) +
               " bytes, inside the header of seven int32 counts (28 bytes)");
  MjlLog log;
  const char* names[] = {"nq", "nv", "nu", "nmocap", "nsensordata", "nuserdata", "name_len"};
  std::int32_t counts[7];
  for (int k = 0; k < 7; ++k) {
    counts[k] = int32_at(bytes, 4 * k);
    const std::int32_t most = k == 6 ? kMaxName : kMaxCount;
    if (counts[k] < 0 || counts[k] > most || (k < 3 && counts[k] == 0))
      refuse(file, 4 * k,
             std::string(names[k]) + " is " + std::to_string(counts[k]) +
                 ", which no log has (the header is seven int32 counts: nq, nv, nu, nmocap, "
                 "nsensordata, nuserdata, name_len)");
  }
  log.nq = counts[0], log.nv = counts[1], log.nu = counts[2], log.nmocap = counts[3];
  log.nsensordata = counts[4], log.nuserdata = counts[5];
  const std::int64_t name_len = counts[6];
  if (size < kHeaderBytes + name_len)
    refuse(file, size,
           "the file ends inside the model name, which should take " + std::to_string(name_len) +
               " bytes from byte offset 28");
  log.name.assign(bytes.data() + kHeaderBytes, static_cast<std::size_t>(name_len));
  while (!log.name.empty() && log.name.back() == '\0') log.name.pop_back();
  const std::int64_t first = kHeaderBytes + name_len;
  const std::int64_t per_record = 1 + std::int64_t{log.nq} + log.nv + log.nu + 7LL * log.nmocap +
                                  log.nsensordata + log.nuserdata;
  const std::int64_t record_bytes = 4 * per_record;
  const std::int64_t body = size - first;
  if (body % record_bytes != 0) {
    const std::int64_t whole = body / record_bytes;
    refuse(file, first + whole * record_bytes,
           "the last record is cut short: it has " + std::to_string(body % record_bytes) +
               " of its " + std::to_string(record_bytes) +
               " bytes (1 + nq + nv + nu + 7 nmocap "
               "+ nsensordata + nuserdata = " +
               std::to_string(per_record) + " float32 values) after " + std::to_string(whole) +
               " whole records");
  }
  log.records = body / record_bytes;
  if (log.records == 0) refuse(file, first, "the log holds no record after its header");
  for (std::int64_t r = 0; r < log.records; r += skip) {
    const std::int64_t at = first + r * record_bytes;
    // Only what the replay reads: time, qpos, qvel and ctrl.
    for (std::int64_t k = 0; k < 1 + log.nq + log.nv + log.nu; ++k) {
      const float v = float_at(bytes, at + 4 * k);
      if (!std::isfinite(v))
        refuse(file, at + 4 * k,
               "value " + std::to_string(k) + " of record " + std::to_string(r) +
                   " is not a finite number");
      const double x = v;
      if (k == 0)
        log.time.push_back(x);
      else if (k <= log.nq)
        log.qpos.push_back(x);
      else if (k <= log.nq + log.nv)
        log.qvel.push_back(x);
      else
        log.ctrl.push_back(x);
    }
    ++log.frames;
  }
  return log;
}

KitchenImport import_kitchen_demos(const KitchenImportConfig& config, const Progress& progress) {
  const auto& spec = env::task(config.task);
  if (spec.family != "kitchen")
    throw UsageError("'" + config.task +
                     "' is not a kitchen task: kitchen-complete-v0, kitchen-partial-v0 or "
                     "kitchen-mixed-v0");
  KitchenImport out;
  const bool complete = spec.name == "kitchen-complete-v0";
  for (const auto& input : config.inputs)
    for (auto& log : logs_of(input, complete)) out.logs.push_back(std::move(log));
  if (out.logs.empty())
    throw UsageError("no .mjl log found in the inputs given" +
                     std::string(complete ? " (for kitchen-complete, only folders whose names end "
                                            "in microwave_kettle_switch_slide are read from a "
                                            "folder of folders, as D4RL chose them)"
                                          : ""));

  env::Environment e(spec.name);
  const int S = spec.obs_dim, A = spec.act_dim, nq = spec.nq, nv = spec.nv;
  const double step_seconds = e.dt();  // skip x timestep: 0.08 s
  auto& d = out.arrays;
  d.obs_dim = S, d.act_dim = A, d.qpos_dim = nq, d.qvel_dim = nv;
  std::vector<float> obs(static_cast<std::size_t>(S)), next(static_cast<std::size_t>(S));
  std::vector<float> act(static_cast<std::size_t>(A));
  for (std::size_t i = 0; i < out.logs.size(); ++i) {
    progress.update(static_cast<double>(i) / static_cast<double>(out.logs.size()),
                    "replaying " + out.logs[i].filename().string());
    const MjlLog log = read_mjl(out.logs[i], config.skip);
    if (log.nq != nq || log.nv != nv || log.nu != A)
      throw data::DatasetError(out.logs[i].string(), "",
                               "at byte offset 0: the log was recorded on a model with nq " +
                                   std::to_string(log.nq) + ", nv " + std::to_string(log.nv) +
                                   ", nu " + std::to_string(log.nu) + " ('" + log.name +
                                   "'); D4RL's kitchen has nq " + std::to_string(nq) + ", nv " +
                                   std::to_string(nv) + ", nu " + std::to_string(A));
    if (log.frames < 2)
      throw data::DatasetError(out.logs[i].string(), "",
                               "holds " + std::to_string(log.records) + " records, fewer than " +
                                   std::to_string(config.skip + 1) + ": no step once every " +
                                   std::to_string(config.skip) + "th is kept");
    // parse_demos.py: env.reset(), then the log's first state and a forward pass.
    e.reset(config.seed + i, obs);
    e.set_state({log.qpos.data(), static_cast<std::size_t>(nq)},
                {log.qvel.data(), static_cast<std::size_t>(nv)});
    for (std::int64_t t = 0; t + 1 < log.frames; ++t) {
      env::kitchen::observe_again(e);
      e.observe(obs);
      const auto q = e.qpos();
      const auto v = e.qvel();
      for (int k = 0; k < A; ++k) {
        const double ctrl = log.ctrl[static_cast<std::size_t>(t * A + k)];
        const double velocity = (ctrl - obs[static_cast<std::size_t>(k)]) / step_seconds;
        act[static_cast<std::size_t>(k)] =
            static_cast<float>(std::clamp(velocity / 2.0, -0.999, 0.999));
      }
      d.observations.insert(d.observations.end(), obs.begin(), obs.end());
      d.actions.insert(d.actions.end(), act.begin(), act.end());
      for (int k = 0; k < nq; ++k) d.qpos.push_back(static_cast<float>(q[k]));
      for (int k = 0; k < nv; ++k) d.qvel.push_back(static_cast<float>(v[k]));
      d.rewards.push_back(static_cast<float>(env::kitchen::elements_at_goal(spec.name, obs)));
      d.terminals.push_back(t + 2 == log.frames);
      d.timeouts.push_back(0);
      e.step(act, next);
    }
    out.lengths.push_back(log.frames - 1);
    progress.check();
  }
  progress.update(1.0, "replayed");
  out.metadata["env_id"] = spec.name;
  out.metadata["source"] =
      "relay-policy-learning's kitchen demonstrations (.mjl logs), replayed as D4RL's "
      "parse_demos.py and generate_kitchen_datasets.py did: every " +
      std::to_string(config.skip) +
      "th record, observations drawn before each step, rewards relabelled with completed "
      "elements kept";
  out.metadata["demonstrations"] = std::to_string(out.logs.size());
  out.metadata["noise_seed"] = std::to_string(config.seed);
  return out;
}

}  // namespace dstudio::behaviour
