// Action dimensions named by their actuated joints. See action_names.h.

#include "dstudio/env/action_names.h"

#include <mujoco/mujoco.h>

#include "dstudio/env/environment.h"

namespace dstudio::env {

std::vector<std::string> action_names(std::string_view task_name) {
  const EnvironmentDefinition& spec = task(task_name);
  const ModelPtr model = load_model(spec);
  std::vector<std::string> out;
  for (int i = 0; i < model->nu; ++i) {
    // An actuator drives a joint (trntype mjTRN_JOINT) whose id is its first transmission index.
    const char* name = nullptr;
    if (model->actuator_trntype[i] == mjTRN_JOINT)
      name = mj_id2name(model.get(), mjOBJ_JOINT, model->actuator_trnid[2 * i]);
    if (!name) name = mj_id2name(model.get(), mjOBJ_ACTUATOR, i);
    std::string text = name ? name : "joint " + std::to_string(i + 1);
    constexpr std::string_view ending = "_joint";
    if (text.size() > ending.size() && text.ends_with(ending))
      text.resize(text.size() - ending.size());
    out.push_back(std::move(text));
  }
  return out;
}

std::vector<std::string> action_names_or_numbers(std::string_view task_name, int count) {
  try {
    auto names = action_names(task_name);
    if (static_cast<int>(names.size()) == count) return names;
  } catch (const EnvError&) {
    // Not a task the studio simulates: numbered below.
  }
  std::vector<std::string> out;
  for (int i = 1; i <= count; ++i) out.push_back("joint " + std::to_string(i));
  return out;
}

}  // namespace dstudio::env
