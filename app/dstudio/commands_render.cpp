// dstudio render: a film strip of a rollout or of a dataset episode, rendered offscreen.

#include <cstdio>
#include <memory>

#include "commands.h"
#include "dstudio/behaviour/policy_set.h"
#include "dstudio/common/error.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/compatibility.h"
#include "dstudio/env/environment.h"
#include "dstudio/render/scene_renderer.h"

namespace dstudio::cli {

namespace {

// What `dstudio render` is given.
struct RenderArgs {
  std::string env = "hopper", policy = "expert", algorithm = "sac", dataset, out;
  std::int64_t episode = 0;
  int steps = 300, frames = 12, columns = 4, width = 320, height = 240;
  std::uint64_t seed = 0;
};

// The dataset --dataset, whose episode --episode is replayed: checked against the environment
// `name` (its own, when it names one) and for the states a replay needs.
std::unique_ptr<data::Dataset> dataset_to_replay(const RenderArgs& a, std::string& name) {
  auto dataset = std::make_unique<data::Dataset>(load_user_dataset(a.dataset));
  if (!dataset->env_id.empty()) name = dataset->env_id;
  env::check_dataset_matches(*dataset, env::task(name));
  if (dataset->data.qpos.empty() || dataset->data.qvel.empty())
    throw dstudio::Error(a.dataset + ": has no infos/qpos and infos/qvel to replay");
  if (a.episode < 0 || a.episode >= static_cast<std::int64_t>(dataset->episodes.size()))
    throw dstudio::Error(a.dataset + ": has no episode " + std::to_string(a.episode));
  return dataset;
}

// The frames of a film strip, and the steps and return they cover.
struct Strip {
  std::vector<render::Image> frames;
  double ret = 0.0;
  int steps = 0;
};

// The dataset's episode set again state by state from infos/qpos and infos/qvel, a frame every
// `every` steps.
Strip replay_episode(const data::Dataset& dataset, const RenderArgs& a, env::Environment& e,
                     render::SceneRenderer& renderer, int every) {
  Strip strip;
  const auto& spec = e.spec();
  const auto& ep = dataset.episodes[static_cast<std::size_t>(a.episode)];
  const int nq = spec.nq, nv = spec.nv;
  for (std::int64_t t = 0; t < ep.length && t < a.steps; ++t, ++strip.steps) {
    const auto row = ep.start + t;
    std::vector<double> qpos(dataset.data.qpos.begin() + row * nq,
                             dataset.data.qpos.begin() + (row + 1) * nq);
    std::vector<double> qvel(dataset.data.qvel.begin() + row * nv,
                             dataset.data.qvel.begin() + (row + 1) * nv);
    e.set_state(qpos, qvel);
    strip.ret += dataset.data.rewards[row];
    if (t % every == 0) strip.frames.push_back(renderer.render(e.data()));
  }
  return strip;
}

// A shipped behaviour policy (or uniform random actions) acting from the reset of --seed, a frame
// every `every` steps and one at the episode's end.
Strip roll_out(const RenderArgs& a, env::Environment& e, render::SceneRenderer& renderer,
               int every) {
  Strip strip;
  const auto& spec = e.spec();
  std::vector<float> obs(static_cast<std::size_t>(spec.obs_dim)),
      act(static_cast<std::size_t>(spec.act_dim));
  behaviour::PolicySet set;
  int index = -1;
  const bool random = a.policy == "random";
  if (!random) {
    if (a.policy != "expert" && a.policy != "medium")
      throw dstudio::UsageError("unknown policy '" + a.policy + "'; known: expert, medium, random");
    set = behaviour::shipped_policy_set(spec.name, behaviour::parse_algorithm(a.algorithm));
    index = a.policy == "expert" ? set.expert : set.medium;
  }
  Random noise(a.seed);
  e.reset(a.seed, obs);
  for (; strip.steps < a.steps; ++strip.steps) {
    if (strip.steps % every == 0) strip.frames.push_back(renderer.render(e.data()));
    if (random)
      for (auto& x : act) x = static_cast<float>(noise.uniform(-1.0, 1.0));
    else
      set.act_deterministic(index, obs, act);
    const auto r = e.step(act, obs);
    strip.ret += r.reward;
    if (r.terminated || r.truncated) {
      ++strip.steps;
      strip.frames.push_back(renderer.render(e.data()));
      break;
    }
  }
  return strip;
}

// Renders the film strip --out of a rollout, or of a dataset's episode with --dataset.
void render_strip(const RenderArgs& a) {
  std::unique_ptr<data::Dataset> dataset;
  std::string name = a.env;
  if (!a.dataset.empty()) dataset = dataset_to_replay(a, name);
  env::Environment e(name);
  const auto& spec = e.spec();
  render::OffscreenContext context;
  // A task seen from its own place (a maze from above, a kitchen's counter) is rendered from
  // there; a runner is followed from the side.
  render::CameraView view;
  if (!spec.camera.track) view = render::task_camera(spec.camera);
  if (spec.name == "halfcheetah") view.lookat_z = 0.4, view.distance = 3.5;
  render::SceneRenderer renderer(e.model(), a.width, a.height, view);
  const int every = std::max(1, a.steps / a.frames);
  const auto strip =
      dataset ? replay_episode(*dataset, a, e, renderer, every) : roll_out(a, e, renderer, every);
  render::write_png(a.out, render::contact_sheet(strip.frames, a.columns));
  std::printf("%s: %d steps, return %.1f, %zu frames every %d steps -> %s\n", spec.name.c_str(),
              strip.steps, strip.ret, strip.frames.size(), every, a.out.c_str());
}

}  // namespace

void add_render_commands(CLI::App& app, int& exit_code) {
  auto* render = app.add_subcommand("render",
                                    "Render a policy rollout or a dataset episode to a PNG film "
                                    "strip (needs a display or xvfb-run)");
  auto a = std::make_shared<RenderArgs>();
  render->add_option("--env", a->env, "Environment")
      ->capture_default_str()
      ->check(known_environment());
  render->add_option("--policy", a->policy, "Shipped behaviour policy: expert, medium or random")
      ->capture_default_str();
  render->add_option("--algorithm", a->algorithm, "Which shipped policies: sac or ars")
      ->check(CLI::IsMember({"sac", "ars"}))
      ->capture_default_str();
  render->add_option("--dataset", a->dataset,
                     "Replay an episode of this dataset from infos/qpos and infos/qvel instead");
  render->add_option("--episode", a->episode, "Episode of the dataset to replay")
      ->capture_default_str()
      ->check(whole_number(0, 100'000'000));
  render->add_option("--steps", a->steps, "Steps to cover")
      ->check(whole_number(1, 100000))
      ->capture_default_str();
  render->add_option("--frames", a->frames, "Frames in the strip, evenly spaced")
      ->check(whole_number(1, 200))
      ->capture_default_str();
  render->add_option("--columns", a->columns, "Frames per row")
      ->check(whole_number(1, 50))
      ->capture_default_str();
  render->add_option("--width", a->width, "Frame width")
      ->check(whole_number(16, 4096))
      ->capture_default_str();
  render->add_option("--height", a->height, "Frame height")
      ->check(whole_number(16, 4096))
      ->capture_default_str();
  render->add_option("--seed", a->seed, "Seed of the rollout")
      ->capture_default_str()
      ->check(seed_number());
  render->add_option("--out", a->out, "Output PNG")->required();
  render->callback([&exit_code, a] {
    try {
      render_strip(*a);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dstudio: error: %s\n", e.what());
      exit_code = kFailed;
    }
  });
}

}  // namespace dstudio::cli
