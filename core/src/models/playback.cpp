// The viewers' shared clock and the changes a fork makes. See playback.h.

#include "dstudio/models/playback.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "dstudio/common/error.h"
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
  return first_step + static_cast<int>(std::floor(seconds / dt + 1e-9));
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
  } else if (key == "interventions") {
    if (value != "none")
      throw UsageError(change +
                       ": interventions=none clears them; give an intervention itself "
                       "(e.g. head:2.1=zero) to add one");
    out.clear_interventions = true;
  } else {
    try {
      parse_intervention(change);
    } catch (const UsageError& e) {
      throw UsageError(std::string(e.what()) +
                       " (a fork's change is target=NUMBER, zeroing=NAME, checkpoint=PATH, "
                       "interventions=none or an intervention such as head:2.1=zero)");
    }
    out.interventions.push_back(change);
  }
  return out;
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

}  // namespace dstudio::models
