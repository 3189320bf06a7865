// dstudio env list: the environments the studio simulates, from its registry (its own and the
// plugins'), each with its views (the "-po" variants), dimensions, horizon and references.

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dstudio/env/environment.h"

namespace dstudio::cli {
namespace {

// An entry that is another entry's view ("hopper-po" of "hopper") is listed with it.
bool is_view(const env::EnvironmentDefinition& d) {
  return !d.base.empty() && d.base != d.name;
}

nlohmann::ordered_json environment_json(const env::EnvironmentDefinition& d,
                                        const std::vector<std::string>& views) {
  return {{"name", d.name},
          {"family", d.family},
          {"description", d.description},
          {"observation_dim", d.obs_dim},
          {"action_dim", d.act_dim},
          {"frame_skip", d.frame_skip},
          {"horizon", d.max_episode_steps},
          {"ref_min_score", d.ref_min_score},
          {"ref_max_score", d.ref_max_score},
          {"goal_reaching", d.goal_reaching},
          {"reports_success", d.goal_reaching || d.reports_success},
          {"views", views},
          {"observation_names", d.observation_names},
          {"origin", d.origin.label()}};
}

void list_environments(bool json) {
  const auto all = env::environments().all();
  auto views_of = [&](const std::string& base) {
    std::vector<std::string> out;
    for (const auto& v : all)
      if (is_view(*v) && v->base == base) out.push_back(v->name);
    return out;
  };
  if (json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& d : all)
      if (!is_view(*d)) out.push_back(environment_json(*d, views_of(d->name)));
    std::cout << out.dump(2) << std::endl;
    return;
  }
  std::printf("%-27s %-11s %4s %4s %7s  %-12s %s\n", "environment", "family", "obs", "act",
              "horizon", "origin", "views");
  int count = 0;
  for (const auto& d : all) {
    if (is_view(*d)) continue;
    std::string views;
    for (const auto& v : views_of(d->name)) views += (views.empty() ? "" : ", ") + v;
    std::printf("%-27s %-11s %4d %4d %7d  %-12s %s\n", d->name.c_str(), d->family.c_str(),
                d->obs_dim, d->act_dim, d->max_episode_steps, d->origin.label().c_str(),
                views.c_str());
    ++count;
  }
  std::printf("%d environments\n", count);
}

}  // namespace

void add_env_commands(CLI::App& app, int& exit_code) {
  auto* env = app.add_subcommand("env", "The environments the studio simulates");
  env->require_subcommand(1);
  auto* list = env->add_subcommand(
      "list",
      "Every environment of the registry (the studio's own and the plugins'), its views, "
      "dimensions and horizon");
  auto json = std::make_shared<bool>(false);
  list->add_flag("--json", *json,
                 "Print one JSON array: name, family, dimensions, horizon, references, views, the "
                 "name of each observation dimension and where it comes from");
  list->callback([&exit_code, json] {
    list_environments(*json);
    exit_code = kOk;
  });
}

}  // namespace dstudio::cli
