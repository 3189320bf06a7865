#include "dstudio/data/dataset.h"

#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>

namespace dstudio::data {

const char* to_string(EndReason reason) {
  switch (reason) {
    case EndReason::Terminal:
      return "terminal";
    case EndReason::Timeout:
      return "timeout";
    case EndReason::Unterminated:
      return "unterminated";
  }
  return "?";
}

template <class T>
static std::int64_t bytes_of(const std::vector<T>& v) {
  return static_cast<std::int64_t>(v.capacity() * sizeof(T));
}

std::int64_t TransitionArrays::memory_bytes() const {
  return bytes_of(observations) + bytes_of(next_observations) + bytes_of(actions) +
         bytes_of(rewards) + bytes_of(terminals) + bytes_of(timeouts) + bytes_of(qpos) +
         bytes_of(qvel) + bytes_of(goals) +
         std::accumulate(
             state_infos.begin(), state_infos.end(), std::int64_t{0},
             [](std::int64_t sum, const auto& info) { return sum + bytes_of(info.second.values); });
}

std::int64_t Dataset::memory_bytes() const {
  std::int64_t kept = 0;
  for (const auto& [key, a] : metadata_arrays) kept += bytes_of(a.values);
  return data.memory_bytes() + bytes_of(episodes) + bytes_of(state_mean) + bytes_of(state_std) +
         kept;
}

namespace {

// Episodes of `rewards` cut where `end_at(i, length)` names an end reason for step i (length: the
// steps of the episode so far, i included); steps after the last end form one Unterminated episode.
template <class EndAt>
std::vector<Episode> segment_by(const std::vector<float>& rewards, EndAt end_at) {
  const auto n = static_cast<std::int64_t>(rewards.size());
  std::vector<Episode> episodes;
  Episode current;
  for (std::int64_t i = 0; i < n; ++i) {
    current.ret += rewards[static_cast<std::size_t>(i)];
    ++current.length;
    if (const std::optional<EndReason> end = end_at(i, current.length)) {
      current.end = *end;
      episodes.push_back(current);
      current = Episode{.start = i + 1};
    }
  }
  if (current.length > 0) {
    current.end = EndReason::Unterminated;
    episodes.push_back(current);
  }
  return episodes;
}

}  // namespace

std::vector<Episode> segment_episodes(const std::vector<float>& rewards,
                                      const std::vector<std::uint8_t>& terminals,
                                      const std::vector<std::uint8_t>& timeouts,
                                      std::int64_t cut_every) {
  return segment_by(rewards, [&](std::int64_t i, std::int64_t length) -> std::optional<EndReason> {
    const auto at = static_cast<std::size_t>(i);
    const bool terminal = !terminals.empty() && terminals[at];
    const bool timeout = !timeouts.empty() && timeouts[at];
    const bool cut = cut_every > 0 && length == cut_every;
    if (terminal) return EndReason::Terminal;
    if (timeout || cut) return EndReason::Timeout;
    return std::nullopt;
  });
}

std::vector<Episode> segment_goal_episodes(const TransitionArrays& data, double jump) {
  const std::int64_t n = data.size();
  const auto S = static_cast<std::size_t>(data.obs_dim);
  return segment_by(data.rewards, [&](std::int64_t i, std::int64_t) -> std::optional<EndReason> {
    const auto at = static_cast<std::size_t>(i);
    if (!data.timeouts.empty() && data.timeouts[at]) return EndReason::Timeout;
    if (i + 1 < n && S >= 2) {
      const float* a = &data.observations[at * S];
      const float* b = a + S;
      if (std::hypot(double(b[0]) - a[0], double(b[1]) - a[1]) > jump) return EndReason::Timeout;
    }
    return std::nullopt;
  });
}

std::string d4rl_antmaze_task_of_file(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  if (name.rfind("antmaze-", 0) == 0) {
    const auto dot = name.rfind(".hdf5");
    return dot == std::string::npos ? name : name.substr(0, dot);
  }
  // D4RL's download names: Ant_maze_<maze>_noisy_multistart_<bool>_multigoal_<bool>_sparse[_fixed]
  struct Maze {
    const char* file;
    const char* task;
  };
  static const Maze mazes[] = {
      {"u-maze", "umaze"}, {"big-maze", "medium"}, {"hardest-maze", "large"}};
  if (name.rfind("Ant_maze_", 0) != 0) return {};
  for (const auto& m : mazes) {
    if (name.find(std::string("Ant_maze_") + m.file + "_") != 0) continue;
    const bool multistart = name.find("multistart_True") != std::string::npos;
    const bool multigoal = name.find("multigoal_True") != std::string::npos;
    const bool fixed = name.find("_fixed") != std::string::npos;
    std::string variant;
    if (std::string(m.task) == "umaze")
      variant = multistart ? "-diverse" : "";
    else
      variant = multigoal ? "-diverse" : "-play";
    return std::string("antmaze-") + m.task + variant + (fixed ? "-v2" : "-v0");
  }
  return {};
}

std::string d4rl_adroit_task_of_file(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (const auto dot = name.rfind(".hdf5"); dot != std::string::npos && dot + 5 == name.size())
    name.resize(dot);
  for (const char* task : {"pen", "door", "hammer", "relocate"}) {
    const std::string t = task;
    if (name.rfind(t + "-", 0) != 0) continue;
    const std::string rest = name.substr(t.size() + 1);
    for (const char* kind : {"human", "cloned", "expert"})
      for (const char* version : {"v0", "v1", "v2"})
        if (rest == std::string(kind) + "-" + version) return name;
    if (rest == "v0_demos_clipped") return t + "-human-v0";
    if (rest == "demos-v0-bc-combined") return t + "-cloned-v0";
    if (rest == "v0_expert_clipped") return t + "-expert-v0";
  }
  return {};
}

std::string d4rl_kitchen_task_of_file(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (const auto dot = name.rfind(".hdf5"); dot != std::string::npos && dot + 5 == name.size())
    name.resize(dot);
  // The names D4RL's generation script saved the files under (kitchen/__init__.py's URLs).
  if (name == "mini_kitchen_microwave_kettle_light_slider-v0") return "kitchen-complete-v0";
  if (name == "kitchen_microwave_kettle_light_slider-v0") return "kitchen-partial-v0";
  if (name == "kitchen_microwave_kettle_bottomburner_light-v0") return "kitchen-mixed-v0";
  for (const char* kind : {"complete", "partial", "mixed"})
    for (const char* version : {"v0", "v1", "v2"})
      if (name == std::string("kitchen-") + kind + "-" + version) return name;
  return {};
}

void state_statistics(const TransitionArrays& data, const std::vector<Episode>& episodes,
                      std::vector<float>& mean, std::vector<float>& std) {
  const auto dim = static_cast<std::size_t>(data.obs_dim);
  // Two passes in double precision: the single-pass formula loses digits on long datasets.
  std::vector<double> sum(dim, 0.0), sq(dim, 0.0);
  std::int64_t count = 0;
  for (const auto& ep : episodes) {
    if (!ep.complete()) continue;
    for (std::int64_t t = ep.start; t < ep.start + ep.length; ++t) {
      const float* row = &data.observations[static_cast<std::size_t>(t) * dim];
      for (std::size_t d = 0; d < dim; ++d) sum[d] += row[d];
    }
    count += ep.length;
  }
  mean.assign(dim, 0.0f);
  std.assign(dim, 1.0f);
  if (count == 0) return;
  for (std::size_t d = 0; d < dim; ++d) sum[d] /= static_cast<double>(count);
  for (const auto& ep : episodes) {
    if (!ep.complete()) continue;
    for (std::int64_t t = ep.start; t < ep.start + ep.length; ++t) {
      const float* row = &data.observations[static_cast<std::size_t>(t) * dim];
      for (std::size_t d = 0; d < dim; ++d) {
        const double c = row[d] - sum[d];
        sq[d] += c * c;
      }
    }
  }
  for (std::size_t d = 0; d < dim; ++d) {
    mean[d] = static_cast<float>(sum[d]);
    std[d] = static_cast<float>(std::sqrt(sq[d] / static_cast<double>(count)));
  }
}

std::string content_fingerprint(const TransitionArrays& data) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  const std::int64_t header[3] = {data.obs_dim, data.act_dim, data.size()};
  XXH3_128bits_update(state, header, sizeof header);
  auto add = [&](const auto& v) { XXH3_128bits_update(state, v.data(), v.size() * sizeof(v[0])); };
  add(data.observations);
  add(data.actions);
  add(data.rewards);
  add(data.terminals);
  add(data.timeouts);
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  char text[64];
  std::snprintf(text, sizeof text, "xxh3-128:%016llx%016llx",
                static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

DatasetSummary summarize(const Dataset& dataset) {
  DatasetSummary s;
  s.transitions = dataset.transitions();
  s.obs_dim = dataset.data.obs_dim;
  s.act_dim = dataset.data.act_dim;
  double sum = 0, sum_sq = 0, len_sum = 0;
  bool first = true;
  for (const auto& ep : dataset.episodes) {
    switch (ep.end) {
      case EndReason::Terminal:
        ++s.terminated;
        break;
      case EndReason::Timeout:
        ++s.timed_out;
        break;
      case EndReason::Unterminated:
        ++s.unterminated_episodes;
        s.tail_steps += ep.length;
        continue;
    }
    ++s.episodes;
    sum += ep.ret;
    sum_sq += ep.ret * ep.ret;
    len_sum += static_cast<double>(ep.length);
    if (first) {
      s.return_min = s.return_max = ep.ret;
      s.length_min = s.length_max = ep.length;
      first = false;
    }
    s.return_min = std::min(s.return_min, ep.ret);
    s.return_max = std::max(s.return_max, ep.ret);
    s.length_min = std::min(s.length_min, ep.length);
    s.length_max = std::max(s.length_max, ep.length);
  }
  if (s.episodes > 0) {
    std::vector<double> returns;
    returns.reserve(static_cast<std::size_t>(s.episodes));
    for (const auto& ep : dataset.episodes)
      if (ep.end != EndReason::Unterminated) returns.push_back(ep.ret);
    std::sort(returns.begin(), returns.end());
    auto quantile = [&](double q) {
      const double at = q * static_cast<double>(returns.size() - 1);
      const auto lo = static_cast<std::size_t>(at);
      const std::size_t hi = std::min(lo + 1, returns.size() - 1);
      return returns[lo] + (at - static_cast<double>(lo)) * (returns[hi] - returns[lo]);
    };
    s.return_p10 = quantile(0.10);
    s.return_p25 = quantile(0.25);
    s.return_median = quantile(0.50);
    s.return_p75 = quantile(0.75);
    s.return_p90 = quantile(0.90);
    const auto n = static_cast<double>(s.episodes);
    s.return_mean = sum / n;
    s.return_std = std::sqrt(std::max(0.0, sum_sq / n - s.return_mean * s.return_mean));
    s.length_mean = len_sum / n;
  }
  return s;
}

double linear_action_r2(const TransitionArrays& data, const Progress& progress) {
  const std::int64_t N = data.size(), S = data.obs_dim, A = data.act_dim, P = S + 1;
  if (N == 0 || A == 0) return std::nan("");
  // Normal equations (X^T X) B = X^T Y with X = [s, 1], accumulated in double.
  std::vector<double> xtx(static_cast<std::size_t>(P * P), 0.0),
      xty(static_cast<std::size_t>(P * A), 0.0), x(static_cast<std::size_t>(P));
  std::vector<double> mean(static_cast<std::size_t>(A), 0.0);
  for (std::int64_t i = 0; i < N; ++i) {
    if (i % 65536 == 0)
      progress.update(static_cast<double>(i) / static_cast<double>(N), "state -> action R^2");
    for (std::int64_t k = 0; k < S; ++k) x[k] = data.observations[i * S + k];
    x[S] = 1.0;
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t c = 0; c <= r; ++c) xtx[r * P + c] += x[r] * x[c];
      for (std::int64_t a = 0; a < A; ++a) xty[r * A + a] += x[r] * data.actions[i * A + a];
    }
    for (std::int64_t a = 0; a < A; ++a) mean[a] += data.actions[i * A + a];
  }
  for (auto& m : mean) m /= static_cast<double>(N);
  // Cholesky of the symmetric matrix, with a tiny ridge so constant state dimensions do no harm.
  double trace = 0;
  for (std::int64_t r = 0; r < P; ++r) trace += xtx[r * P + r];
  for (std::int64_t r = 0; r < P; ++r)
    xtx[r * P + r] += 1e-10 * trace / static_cast<double>(P) + 1e-12;
  std::vector<double> L(static_cast<std::size_t>(P * P), 0.0);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t c = 0; c <= r; ++c) {
      double v = xtx[r * P + c];
      for (std::int64_t k = 0; k < c; ++k) v -= L[r * P + k] * L[c * P + k];
      L[r * P + c] = r == c ? std::sqrt(std::max(v, 1e-300)) : v / L[c * P + c];
    }
  std::vector<double> beta(static_cast<std::size_t>(P * A));
  for (std::int64_t a = 0; a < A; ++a) {
    std::vector<double> z(static_cast<std::size_t>(P));
    for (std::int64_t r = 0; r < P; ++r) {
      double v = xty[r * A + a];
      for (std::int64_t k = 0; k < r; ++k) v -= L[r * P + k] * z[k];
      z[r] = v / L[r * P + r];
    }
    for (std::int64_t r = P - 1; r >= 0; --r) {
      double v = z[r];
      for (std::int64_t k = r + 1; k < P; ++k) v -= L[k * P + r] * beta[k * A + a];
      beta[r * A + a] = v / L[r * P + r];
    }
  }
  // Residuals in a second pass, so the sums are of small numbers.
  double residual = 0, total = 0;
  for (std::int64_t i = 0; i < N; ++i)
    for (std::int64_t a = 0; a < A; ++a) {
      double pred = beta[S * A + a];
      for (std::int64_t k = 0; k < S; ++k) pred += beta[k * A + a] * data.observations[i * S + k];
      const double y = data.actions[i * A + a];
      residual += (y - pred) * (y - pred);
      total += (y - mean[a]) * (y - mean[a]);
    }
  if (total <= 0) return std::nan("");
  return 1.0 - residual / total;
}

std::string dataset_name(const Dataset& dataset) {
  auto env = dataset.metadata.find("env_id");
  auto kind = dataset.metadata.find("kind");
  std::string name;
  if (env != dataset.metadata.end() && kind != dataset.metadata.end()) {
    name = env->second + "-" + kind->second;
  } else {
    name = std::filesystem::path(dataset.path).stem().string();
    if (name == "main_data")
      name = std::filesystem::path(dataset.path)
                 .parent_path()
                 .parent_path()
                 .filename()
                 .string();  // Minari
    const auto v = name.rfind("-v");
    if (v != std::string::npos && v + 2 < name.size() &&
        std::all_of(name.begin() + static_cast<std::ptrdiff_t>(v) + 2, name.end(),
                    [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
      name.resize(v);
  }
  for (auto& ch : name)
    ch = ch == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return name;
}

}  // namespace dstudio::data
