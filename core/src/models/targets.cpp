// Which target returns to condition a model on. See targets.h.

#include "dstudio/models/targets.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dstudio::models {
namespace {

std::string rounded(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", v);
  return text;
}

// The q-quantile of sorted values, by linear interpolation between order statistics.
double quantile(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const auto above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (at - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

}  // namespace

std::vector<double> reference_targets(const env::EnvironmentDefinition& task, double shift) {
  std::vector<double> out;
  const double steps = task.goal_reaching ? 1.0 : static_cast<double>(task.max_episode_steps);
  for (double t : task.default_targets) out.push_back(t + shift * steps);
  return out;
}

double first_reference_target(const env::EnvironmentDefinition& task, double shift) {
  const auto targets = reference_targets(task, shift);
  return targets.empty() ? 0.0 : targets.front();
}

double default_target(const CheckpointInfo& info) {
  return first_reference_target(env::task(info.env_id.empty() ? "hopper" : info.env_id),
                                info.training.reward_shift);
}

std::string reward_shift_note(double shift) {
  if (shift == 0.0) return {};
  char text[160];
  std::snprintf(text, sizeof text,
                "rewards shifted by %g (returns-to-go and targets count r %s %g a step; scores are "
                "the task's)",
                shift, shift < 0 ? "-" : "+", std::abs(shift));
  return text;
}

std::vector<TargetChoice> target_choices(const env::EnvironmentDefinition& task,
                                         std::vector<double> returns, double shift) {
  returns.erase(
      std::remove_if(returns.begin(), returns.end(), [](double v) { return !std::isfinite(v); }),
      returns.end());
  std::sort(returns.begin(), returns.end());
  std::vector<TargetChoice> references, data;
  for (double t : reference_targets(task, shift))
    references.push_back({t, task.name + " reference " + rounded(t)});
  if (!returns.empty()) {
    data.push_back({returns.back(), "data's best episode " + rounded(returns.back())});
    data.push_back(
        {quantile(returns, 0.9), "data's 90th percentile " + rounded(quantile(returns, 0.9))});
    data.push_back(
        {quantile(returns, 0.5), "data's median episode " + rounded(quantile(returns, 0.5))});
  }
  const bool reference_first =
      !references.empty() && (returns.empty() || returns.back() >= 0.5 * references.front().value);
  std::vector<TargetChoice> out;
  const auto add = [&out](const TargetChoice& c) {
    if (std::none_of(out.begin(), out.end(),
                     [&](const TargetChoice& o) { return std::abs(o.value - c.value) < 0.5; }))
      out.push_back(c);
  };
  if (!reference_first && !data.empty()) add(data.front());
  for (const auto& c : references) add(c);
  for (const auto& c : data) add(c);
  return out;
}

}  // namespace dstudio::models
