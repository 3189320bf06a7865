// Options checked as text: tasks and JSON objects. See commands.h.

#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "dstudio/behaviour/policy_set.h"
#include "dstudio/env/environment.h"

namespace dstudio::cli {

namespace {

// An ENV validator whose message is what `lookup` throws for the text.
template <class Lookup>
CLI::Validator environment_validator(Lookup lookup) {
  return CLI::Validator(
      [lookup](std::string& text) -> std::string {
        try {
          (void)lookup(text);
          return {};
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      "ENV");
}

}  // namespace

CLI::Validator known_environment() {
  return environment_validator([](const std::string& text) { return &env::task(text); });
}

CLI::Validator known_training_environment() {
  return environment_validator(
      [](const std::string& text) { return &behaviour::training_task(text); });
}

CLI::Validator json_object() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object())
          return "must be a JSON object such as '{\"hidden\": 64}', not '" + text + "'";
        return {};
      },
      "JSON");
}

}  // namespace dstudio::cli
