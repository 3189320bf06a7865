// The viewers' shared clock and the changes a fork makes. See playback.h.

#include "dstudio/models/playback.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"
#include "dstudio/common/json_fields.h"
#include "dstudio/common/palette.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/text.h"
#include "dstudio/models/interventions.h"

namespace dstudio::models {

const std::vector<double>& playback_speeds() {
  static const std::vector<double> speeds = {0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 0.0};
  return speeds;
}

std::string speed_label(double speed) {
  if (speed <= 0.0) return "max";
  char text[32];
  std::snprintf(text, sizeof text, "%gx", speed);
  return text;
}

double next_speed(double speed, bool faster) {
  const auto& all = playback_speeds();
  const auto at = std::find(all.begin(), all.end(), speed);
  if (at == all.end()) return speed;
  if (faster) return at + 1 == all.end() ? speed : *(at + 1);
  return at == all.begin() ? speed : *(at - 1);
}

int recorded_step(int first_step, int frame, int fps, double speed, double dt) {
  if (fps <= 0 || dt <= 0.0) return first_step;
  const double seconds = static_cast<double>(frame) / fps * (speed > 0.0 ? speed : 1.0);
  // The allowance keeps a frame whose time lands on a step exactly on that step despite rounding
  // (frame 35 at 25 frames/s is 1.4 s, step 175 of 0.008 s steps, computed as 174.99999999999997).
  // Held to what an int can say: a recording far longer than any episode ends at INT_MAX.
  const double steps = std::floor(seconds / dt + 1e-9);
  const double room = static_cast<double>(std::numeric_limits<int>::max() - first_step);
  return first_step + static_cast<int>(std::clamp(steps, 0.0, room));
}

PlaybackRate::PlaybackRate(double dt, double window_seconds)
    : dt_(dt), window_(std::max(1.0, window_seconds)) {}

void PlaybackRate::add(double seconds, int step) {
  if (!samples_.empty() && (step < samples_.back().second || seconds < samples_.back().first))
    samples_.clear();
  samples_.emplace_back(seconds, step);
  // The oldest kept is the last one at least a window before the newest: the rate spans the
  // window whole.
  while (samples_.size() > 2 && seconds - samples_[1].first >= window_) samples_.pop_front();
}

void PlaybackRate::reset() {
  samples_.clear();
}

std::optional<double> PlaybackRate::rate() const {
  if (samples_.size() < 2 || dt_ <= 0.0) return std::nullopt;
  const auto& [t0, s0] = samples_.front();
  const auto& [t1, s1] = samples_.back();
  if (t1 - t0 < 1.0) return std::nullopt;
  return static_cast<double>(s1 - s0) * dt_ / (t1 - t0);
}

bool falls_behind(double asked, std::optional<double> real) {
  return asked > 0.0 && real && *real < 0.9 * asked;
}

std::string rate_label(double real) {
  char rate[32];
  std::snprintf(rate, sizeof rate, real < 0.095 ? "%.2g" : "%.2f", real);
  std::string shown = rate;
  if (shown.find('.') != std::string::npos && shown.find('e') == std::string::npos) {
    while (shown.back() == '0') shown.pop_back();
    if (shown.back() == '.') shown.pop_back();
  }
  return shown + 'x';
}

std::string speed_status(double asked, std::optional<double> real) {
  std::string text = speed_label(asked);
  if (!real || (asked > 0.0 && !falls_behind(asked, real))) return text;
  return text + (asked > 0.0 ? " asked, " : ", ") + rate_label(*real) + " real";
}

ClipLog::ClipLog(std::string viewer, std::string source, std::uint64_t seed, int first_step,
                 int fps, double speed)
    : viewer_(std::move(viewer)),
      source_(std::move(source)),
      seed_(seed),
      first_step_(first_step),
      fps_(fps),
      speed_(speed) {}

void ClipLog::add(Frame frame) {
  frames_.push_back(std::move(frame));
}

namespace {

// A clip log as its file holds it.
struct ClipLogFile {
  std::string viewer, source;
  std::uint64_t seed = 0;
  int first_step = 0, fps = 0;
  double speed = 1.0;
  std::vector<ClipLog::Frame> frames;
};

const JsonFields<ClipLog::Branch>& branch_fields() {
  static const auto fields = [] {
    using B = ClipLog::Branch;
    JsonFields<B> t;
    t.field("change", &B::label)
        .field("fork_step", &B::fork_step, {0})
        .field("step", &B::step, {0})
        .required()
        .field("return", &B::return_so_far);
    return t;
  }();
  return fields;
}

const JsonFields<ClipLog::Frame>& frame_fields() {
  static const auto fields = [] {
    using F = ClipLog::Frame;
    JsonFields<F> t;
    t.field("step", &F::step, {0})
        .required()
        .field("return", &F::return_so_far)
        .field("target", &F::target)
        .field("zeroing", &F::zeroing)
        .field("interventions", &F::interventions)
        .objects("forks", &F::branches, branch_fields())
        .omitted_when_empty();
    return t;
  }();
  return fields;
}

const JsonFields<ClipLogFile>& log_fields() {
  static const auto fields = [] {
    using L = ClipLogFile;
    JsonFields<L> t;
    t.field("viewer", &L::viewer)
        .field("source", &L::source)
        .field("seed", &L::seed)
        .field("first_step", &L::first_step, {0})
        .field("fps", &L::fps, {0})
        .field("speed", &L::speed, {0})
        .objects("frames", &L::frames, frame_fields())
        .required("not a clip log");
    return t;
  }();
  return fields;
}

}  // namespace

std::string ClipLog::json() const {
  const ClipLogFile file{viewer_, source_, seed_, first_step_, fps_, speed_, frames_};
  return log_fields().write(file).dump(1) + "\n";
}

void ClipLog::write(const std::filesystem::path& path) const {
  write_text_atomically(path, json());
}

std::filesystem::path ClipLog::path_for(const std::filesystem::path& base) {
  auto p = base;
  if (p.extension() == ".mp4") p.replace_extension();
  return p.string() + ".json";
}

std::vector<int> ClipLog::read_steps(const std::filesystem::path& path) {
  const auto j = nlohmann::ordered_json::parse(read_regular_file(path, 64u << 20), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(path.string() + ": not a clip log (not JSON)");
  std::vector<int> steps;
  for (const auto& f : log_fields().read(j, path.string()).frames) steps.push_back(f.step);
  return steps;
}

namespace {

double number_of(const std::string& text, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(v))
    throw UsageError(what + ": \"" + text + "\" is not a number");
  return v;
}

}  // namespace

BranchChange parse_branch_change(const std::string& change) {
  BranchChange out;
  out.label = change;
  const auto eq = change.find('=');
  const std::string key = change.substr(0, eq),
                    value = eq == std::string::npos ? "" : change.substr(eq + 1);
  if (key == "target") {
    out.target = number_of(value, change);
  } else if (key == "zeroing") {
    out.zeroing = zeroing_from_string(value);
  } else if (key == "checkpoint") {
    if (value.empty()) throw UsageError(change + ": name the checkpoint (checkpoint=PATH)");
    out.checkpoint = value;
  } else if (key == "behaviour") {
    if (value.empty())
      throw UsageError(change + ": name the behaviour policy (behaviour=dapg, or a D4RL file " +
                       "with metadata/policy)");
    out.behaviour = value;
  } else if (key == "interventions") {
    // "none" clears those in force; a list (SPEC;SPEC) puts exactly these in their place.
    out.clear_interventions = true;
    if (value != "none") {
      std::size_t from = 0;
      while (from <= value.size()) {
        const auto end = std::min(value.find(';', from), value.size());
        const std::string spec = value.substr(from, end - from);
        try {
          parse_intervention(spec);
        } catch (const UsageError& e) {
          throw UsageError(change + ": " + e.what() +
                           " (interventions=none clears them; interventions=SPEC;SPEC puts "
                           "these in their place)");
        }
        out.interventions.push_back(spec);
        from = end + 1;
      }
    }
  } else {
    try {
      parse_intervention(change);
    } catch (const UsageError& e) {
      throw UsageError(
          std::string(e.what()) +
          " (a fork's change is target=NUMBER, zeroing=NAME, checkpoint=PATH, "
          "behaviour=dapg|FILE, interventions=none or an intervention such as head:2.1=zero)");
    }
    out.interventions.push_back(change);
  }
  return out;
}

std::string change_text(const BranchChange& change) {
  if (change.target) return "target=" + exact_number(*change.target);
  if (change.zeroing) return std::string("zeroing=") + to_string(*change.zeroing);
  if (!change.checkpoint.empty()) return "checkpoint=" + change.checkpoint;
  if (!change.behaviour.empty()) return "behaviour=" + change.behaviour;
  if (change.clear_interventions) {
    if (change.interventions.empty()) return "interventions=none";
    std::string list;
    for (const auto& spec : change.interventions) list += (list.empty() ? "" : ";") + spec;
    return "interventions=" + list;
  }
  return change.interventions.empty() ? std::string() : change.interventions.front();
}

std::string short_label(const std::string& label) {
  for (const std::string_view prefix : {"checkpoint=", "behaviour="})
    if (label.rfind(prefix, 0) == 0)
      return std::string(prefix) +
             std::filesystem::path(label.substr(prefix.size())).filename().string();
  return label;
}

std::string fork_legend(int index, int fork_step, const std::string& label) {
  const auto& style =
      palette::kBranches[static_cast<std::size_t>(std::max(0, index)) % palette::kBranches.size()];
  return "fork " + std::to_string(index + 1) + ", " + std::string(style.colour_word) +
         " ghost: " + short_label(label) + " from step " + std::to_string(fork_step);
}

ForkSpec parse_fork(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos || colon == 0)
    throw UsageError("--fork " + spec + ": give STEP:CHANGE (e.g. 250:target=1800)");
  const auto step_text = spec.substr(0, colon);
  const double step = number_of(step_text, "--fork " + spec);
  if (step < 0 || step != std::floor(step) || step > 1e9)
    throw UsageError("--fork " + spec + ": the step is a whole number from 0");
  ForkSpec out;
  out.step = static_cast<int>(step);
  out.change = parse_branch_change(spec.substr(colon + 1));
  return out;
}

namespace {

// The site of an unlimited ablation spec ("head:2.1", "mlp:3"), or "" for any other spec.
std::string site_of(const std::string& spec) {
  try {
    const auto iv = parse_intervention(spec);
    if (iv.limit.kind != TokenLimit::Kind::All) return {};
    switch (iv.site) {
      case InterventionSite::Head:
        return "head:" + std::to_string(iv.layer) + "." + std::to_string(iv.head);
      case InterventionSite::Mixer:
        return "mixer:" + std::to_string(iv.layer);
      case InterventionSite::Mlp:
        return "mlp:" + std::to_string(iv.layer);
      default:
        return {};
    }
  } catch (const UsageError&) {
    return {};
  }
}

template <typename Match>
std::vector<std::string> without(const std::vector<std::string>& specs, Match match) {
  std::vector<std::string> out;
  for (const auto& s : specs)
    if (!match(s)) out.push_back(s);
  return out;
}

bool is_context(const std::string& spec) {
  return spec.rfind("context:", 0) == 0;
}

}  // namespace

std::string ablation_of(const std::vector<std::string>& specs, const std::string& site) {
  for (const auto& s : specs)
    if (site_of(s) == site) return s.substr(s.find('=') + 1);
  return {};
}

std::vector<std::string> with_ablation(const std::vector<std::string>& specs,
                                       const std::string& site, const std::string& replacement) {
  auto out = without(specs, [&](const std::string& s) { return site_of(s) == site; });
  if (!replacement.empty()) {
    const auto spec = site + "=" + replacement;
    parse_intervention(spec);  // refuses a site or replacement that is not of the grammar
    out.push_back(spec);
  }
  return out;
}

int context_of(const std::vector<std::string>& specs) {
  for (const auto& s : specs)
    if (is_context(s)) {
      try {
        return parse_intervention(s).context;
      } catch (const UsageError&) {
      }
    }
  return 0;
}

std::vector<std::string> with_context(const std::vector<std::string>& specs, int steps) {
  auto out = without(specs, is_context);
  if (steps > 0) out.push_back("context:" + std::to_string(steps));
  return out;
}

std::vector<std::string> with_steering(const std::vector<std::string>& specs, int layer,
                                       double alpha, const std::string& name) {
  const auto prefix = "steer:" + std::to_string(layer) + "=";
  auto out = without(specs, [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
  if (!name.empty() && alpha != 0.0) {
    char a[32];
    std::snprintf(a, sizeof a, "%g", alpha);
    const auto spec = prefix + a + "*" + name;
    parse_intervention(spec);
    out.push_back(spec);
  }
  return out;
}

std::optional<LivePatch> parse_live_patch(const std::string& spec) {
  constexpr std::string_view prefix = "patch[";
  if (spec.rfind(prefix, 0) != 0) return std::nullopt;
  const auto close = spec.find("]:");
  if (close == std::string::npos)
    throw UsageError(spec + ": expected patch[T]:SITE, e.g. patch[1200]:head:1.1");
  LivePatch out;
  out.target = number_of(spec.substr(prefix.size(), close - prefix.size()), spec);
  out.site = spec.substr(close + 2);
  parse_patch(out.site);  // refuses a site that is not of the grammar, naming it
  return out;
}

std::string live_patch_spec(double target, const std::string& site) {
  char t[32];
  std::snprintf(t, sizeof t, "%g", target);
  return "patch[" + std::string(t) + "]:" + site;
}

bool patched(const std::vector<std::string>& specs, const std::string& site) {
  for (const auto& s : specs)
    if (const auto p = parse_live_patch(s); p && p->site == site) return true;
  return false;
}

std::vector<std::string> with_patch(const std::vector<std::string>& specs, const std::string& site,
                                    std::optional<double> target) {
  std::vector<std::string> out;
  for (const auto& s : with_ablation(specs, site, {})) {
    const auto p = parse_live_patch(s);
    if (!p || p->site != site) out.push_back(s);
  }
  if (target) {
    const auto spec = live_patch_spec(*target, site);
    parse_live_patch(spec);
    out.push_back(spec);
  }
  return out;
}

std::string next_ablation(const std::string& current) {
  if (current.empty()) return "zero";
  if (current == "zero") return "mean";
  return {};
}

}  // namespace dstudio::models
