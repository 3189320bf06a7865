// Writes the seed inputs that the project's own writers make (packaging/fuzz.sh's corpora start
// from them; tests/fuzz/make_corpus.sh adds those taken from tests/data and real checkpoints):
//   dataset/    tiny D4RL files from data::write_d4rl and from the test fixtures' independent
//               writer (every flag storage and layout quirk), and Minari files
//   predict/    `dstudio predict` inputs from data::write_nd_arrays, and one whose arrays are
//   declared only config/     every variant's JSON, a training configuration, overrides and names
//   workspace/  a workspace with every key, one as the studio writes it, each lesson's steps
// Usage: fuzz_make_seeds <corpus folder>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dstudio/common/resources.h"
#include "dstudio/common/workspace.h"
#include "dstudio/data/arrays_h5.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/training_config.h"
#include "dstudio/models/variant_config.h"
#include "h5_fixture.h"

namespace fs = std::filesystem;
using namespace dstudio;

namespace {

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// n transitions, obs 2, act 1, one terminal episode and a tail.
data::TransitionArrays transitions(int n, bool infos) {
  data::TransitionArrays a;
  a.obs_dim = 2;
  a.act_dim = 1;
  for (int i = 0; i < n; ++i) {
    a.observations.insert(a.observations.end(), {0.5F * i, -0.25F * i});
    a.next_observations.insert(a.next_observations.end(), {0.5F * (i + 1), -0.25F * (i + 1)});
    a.actions.push_back(0.1F * i);
    a.rewards.push_back(1.0F + 0.5F * static_cast<float>(i % 3));
    a.terminals.push_back(i == n / 2 ? 1 : 0);
    a.timeouts.push_back(0);
  }
  if (infos) {
    a.qpos_dim = 1;
    a.qvel_dim = 1;
    for (int i = 0; i < n; ++i) {
      a.qpos.push_back(0.01F * i);
      a.qvel.push_back(-0.01F * i);
    }
  }
  return a;
}

void datasets(const fs::path& dir) {
  data::WriteOptions plain;
  plain.gzip_level = 0;
  plain.chunk_rows = 4;
  data::write_d4rl(dir / "writer-plain.hdf5", transitions(6, false), {}, plain);
  data::WriteOptions gzip = plain;
  gzip.gzip_level = 4;
  data::write_d4rl(dir / "writer-gzip-infos-metadata.hdf5", transitions(8, true),
                   {{"env", "hopper-medium-v2"}, {"generator", "seed"}}, gzip);
  data::WriteOptions wide = plain;
  wide.float64 = true;
  wide.write_timeouts = false;
  data::write_d4rl(dir / "writer-float64-no-timeouts.hdf5", transitions(5, false), {}, wide);

  test::D4rlSpec spec;
  spec.n = 6;
  spec.obs_dim = 2;
  spec.act_dim = 1;
  spec.gzip = false;
  spec.with_next_observations = false;
  spec.terminals = {0, 0, 1, 0, 0, 0};
  spec.timeouts = {0, 0, 0, 0, 0, 1};
  test::write_d4rl_fixture(dir / "fixture-bool.hdf5", spec);
  spec.flags = test::FlagType::UInt8;
  spec.column_vectors = true;
  test::write_d4rl_fixture(dir / "fixture-uint8-columns.hdf5", spec);
  spec.flags = test::FlagType::Float32;
  spec.column_vectors = false;
  spec.with_timeouts = false;
  spec.float64 = true;
  test::write_d4rl_fixture(dir / "fixture-float-flags-no-timeouts.hdf5", spec);
  spec.flags = test::FlagType::Bool;
  spec.with_timeouts = true;
  spec.float64 = false;
  spec.with_infos = true;
  spec.with_metadata = true;
  spec.gzip = true;
  test::write_d4rl_fixture(dir / "fixture-gzip-infos-metadata.hdf5", spec);

  test::write_minari_fixture(dir / "minari-two-episodes.hdf5",
                             {{3, true, false, 0.0}, {2, false, true, 10.0}});
  test::write_minari_fixture(dir / "minari-unterminated.hdf5", {{4, false, false, 0.0}});
}

void predict_inputs(const fs::path& dir) {
  auto array = [](std::vector<std::int64_t> shape, double scale) {
    data::NdArray a;
    a.shape = std::move(shape);
    a.values.resize(static_cast<std::size_t>(a.numel()));
    for (std::size_t i = 0; i < a.values.size(); ++i) a.values[i] = scale * static_cast<double>(i);
    return a;
  };
  std::map<std::string, data::NdArray> in = {{"states", array({1, 3, 2}, 0.5)},
                                             {"actions", array({1, 3, 1}, 0.1)},
                                             {"returns_to_go", array({1, 3, 1}, 100.0)},
                                             {"timesteps", array({1, 3}, 1.0)}};
  data::write_nd_arrays(dir / "writer-no-mask.h5", in);
  in["mask"] = array({1, 3}, 0.0);
  for (auto& v : in["mask"].values) v = 1.0;
  data::write_nd_arrays(dir / "writer-mask.h5", in);
  // Chunked and never written (every value the fill value 0): the shape is all the header holds.
  // (The fixture chunks 1024 rows, so 1024 windows.)
  test::H5Writer declared(dir / "declared-only.h5");
  declared.declare_only("states", {1024, 3, 2});
  declared.declare_only("actions", {1024, 3, 1});
  declared.declare_only("returns_to_go", {1024, 3, 1});
  declared.declare_only("timesteps", {1024, 3});
}

void configs(const fs::path& dir) {
  for (const auto& name : models::variant_names())
    write_text(dir / ("variant-" + name + ".json"), models::to_json(models::make_variant(name)));
  write_text(dir / "training-defaults.json", models::to_json(models::TrainingConfig{}));
  write_text(
      dir / "overrides.json",
      R"({"hidden": 256, "layers": 2, "dropout": 0.0, "mixer": "conv", "mixer_options": {"k": 1.5}})");
  write_text(dir / "training-overrides.json",
             R"({"learning_rate": 1e-3, "steps": 2000, "cosine_decay": true})");
  for (const char* name : {"dt", "hier", "rtg", "pooling"})
    write_text(dir / (std::string("name-") + name), name);
}

void workspaces(const fs::path& dir) {
  Workspace w;
  w.dataset = "/data/hopper_medium-v2.hdf5";
  w.checkpoint = "/runs/dt/checkpoint.pt";
  w.compare = "/runs/gdt/checkpoint.pt";
  w.comparison = WorkspaceComparison::Difference;
  w.tab = "Viewer";
  w.viewer = WorkspaceViewer{1800.0, models::ModalityZeroing::PastStates, 42, 0.25, true, 180};
  w.attention = WorkspaceAttention{WorkspaceMap::Rollout, 2, 1};
  w.markov_lab = WorkspaceMarkovLab{0.2, 0.3, 2, 2, models::LabMixer::Attention, 2, 600, true};
  w.run = WorkspaceRun::Sweep;
  w.runs = {"/runs/dt", "/runs/gdt"};
  w.window_geometry = "AdnQywADAAAAAAAAAAAAAAeHAAAEEAAAAAAAAAAA";
  w.window_state = "AAAA/wAAAAD9AAAAAA==";
  write_text(dir / "every-key.json", to_json(w));
  write_text(dir / "minimal.json", R"({"decision_studio_workspace": 1})");

  const auto index = nlohmann::json::parse(*embedded_resource("lessons/index.json"));
  for (const auto& name : index.at("lessons")) {
    const auto lesson =
        nlohmann::json::parse(*embedded_resource("lessons/" + name.get<std::string>()));
    int step = 0;
    for (const auto& s : lesson.at("steps"))
      write_text(dir / ("lesson-" + fs::path(name.get<std::string>()).stem().string() + "-" +
                        std::to_string(++step) + ".json"),
                 s.at("workspace").dump(2));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_FOLDER\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  for (const char* sub : {"dataset", "predict", "config", "workspace"})
    fs::create_directories(root / sub);
  datasets(root / "dataset");
  predict_inputs(root / "predict");
  configs(root / "config");
  workspaces(root / "workspace");
  return 0;
}
