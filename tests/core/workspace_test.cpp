// Workspace files: every key the studio writes reads back equal, every shipped lesson parses, and
// each wrong type or value out of range is refused with a message naming the key.

#include "dstudio/common/workspace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/common/resources.h"

namespace dstudio {
namespace {

const std::filesystem::path kResources =
    std::filesystem::path(DSTUDIO_TEST_DATA) / ".." / ".." / "resources";

std::string message_of(const std::string& json_text) {
  try {
    parse_workspace(json_text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

// `n` copies of `item`, separated by commas: a JSON list's items.
std::string many(int n, const std::string& item) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i > 0 ? "," : "") + item;
  return out;
}

std::string saved(const std::string& name) {
  std::ifstream in(std::filesystem::path(DSTUDIO_TEST_DATA) / "saved" / "workspace" / name,
                   std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

Workspace every_key() {
  Workspace w;
  w.dataset = "/data/hopper_medium-v2.hdf5";
  w.checkpoint = "/runs/dt-seed0/checkpoint.pt";
  w.compare = "/runs/gdt-seed0/checkpoint.pt";
  w.comparison = WorkspaceComparison::Difference;
  w.tab = "Viewer";
  w.viewer = WorkspaceViewer{1800.5, models::ModalityZeroing::PastStates, 42, 0.25, false, 180};
  w.viewer->interventions = {"head:2.1=zero", "context:3"};
  w.viewer->forks = {"100:target=1200", "100:checkpoint=/runs/gdt/checkpoint.pt"};
  w.viewer->effects = true;
  w.attention = WorkspaceAttention{WorkspaceMap::Rollout, 3, 2};
  WorkspaceMarkovLab lab;
  lab.p = 0.15;
  lab.q = 0.35;
  lab.order = 2;
  lab.states = 3;
  lab.mixer = models::LabMixer::Convolution;
  lab.window = 4;
  lab.steps = 250;
  lab.train = true;
  w.markov_lab = lab;
  w.run = WorkspaceRun::Ablation;
  w.runs = {"/runs/a", "/runs/b b"};
  w.sweep = "/sweeps/table1";
  w.figures = {"/paper/fig2/rtg_sweep.recipe.json", "/paper/fig3/scores.recipe.json"};
  w.bookmarks = {
      {BookmarkPlace::Viewer, "", 283, "the ghost falls", "target 1200, head 1.1 zeroed"},
      {BookmarkPlace::Run, "/runs/a", 40000, "loss plateau", ""}};
  w.window_geometry = "AdnQywADAAAAAAAAAAAAAA==";
  w.window_state = "AAAA/wAAAAD9AAAAAA==";
  return w;
}

TEST(Workspace, EveryKeyRoundTrips) {
  const Workspace w = every_key();
  const Workspace back = parse_workspace(to_json(w));
  EXPECT_EQ(back, w);
  // The text is a JSON object with exactly the keys set.
  const auto j = nlohmann::json::parse(to_json(w));
  EXPECT_EQ(j.size(), 16U);
  EXPECT_EQ(j["figures"][1], "/paper/fig3/scores.recipe.json");
  EXPECT_EQ(j["bookmarks"][0]["on"], "viewer");
  EXPECT_EQ(j["bookmarks"][0]["step"], 283);
  EXPECT_EQ(j["bookmarks"][1]["run"], "/runs/a");
  EXPECT_FALSE(j["bookmarks"][1].contains("note"));
  // An empty note, as a person may write it, is a bookmark without one.
  const auto empty_note = parse_workspace(
      R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 3, "name": "x", "note": ""}]})");
  ASSERT_EQ(empty_note.bookmarks.size(), 1u);
  EXPECT_EQ(empty_note.bookmarks[0].note, "");
  EXPECT_EQ(j["viewer"]["zeroing"], "states");
  EXPECT_EQ(j["viewer"]["forks"][1], "100:checkpoint=/runs/gdt/checkpoint.pt");
  EXPECT_EQ(j["viewer"]["interventions"][0], "head:2.1=zero");
  EXPECT_EQ(j["attention"]["map"], "rollout");
  EXPECT_EQ(j["markov_lab"]["mixer"], "conv");
  // Nothing set but the version: only the version is written.
  EXPECT_EQ(nlohmann::json::parse(to_json(Workspace{})).size(), 1U);
  EXPECT_EQ(parse_workspace(to_json(Workspace{})), Workspace{});
  // Each speed the viewer offers and each zeroing survive.
  for (double speed : kViewerSpeeds) {
    Workspace s;
    s.viewer = WorkspaceViewer{};
    s.viewer->speed = speed;
    EXPECT_EQ(parse_workspace(to_json(s)).viewer->speed, speed);
  }
  for (auto z : models::kModalityZeroings) {
    Workspace s;
    s.viewer = WorkspaceViewer{};
    s.viewer->zeroing = z;
    EXPECT_EQ(parse_workspace(to_json(s)).viewer->zeroing, z);
  }
}

TEST(Workspace, ReadsWhatTheStudioWrites) {
  // As MainWindow::workspace() writes it (Qt writes integral numbers without a fraction).
  const Workspace w = parse_workspace(R"({
    "checkpoint": "/home/me/runs/dt/checkpoint.pt",
    "dataset": "/home/me/d4rl/hopper_medium-v2.hdf5",
    "decision_studio_workspace": 1,
    "runs": ["/home/me/runs/dt"],
    "tab": "Viewer",
    "viewer": {"seed": 3, "speed": 0.5, "step": 180, "target": 3600, "track": true, "zeroing": "rtg"},
    "window_geometry": "AdnQywADAAAAAAAAAAAAAAeHAAAEEAAAAAAAAAAA",
    "window_state": "AAAA/wAAAAD9AAAAAAAAB4AAAAP0AAAABAAAAAQAAAAIAAAACPwAAAAA"
  })");
  EXPECT_EQ(w.version, 1);
  EXPECT_EQ(w.dataset, "/home/me/d4rl/hopper_medium-v2.hdf5");
  EXPECT_EQ(w.checkpoint, "/home/me/runs/dt/checkpoint.pt");
  EXPECT_EQ(w.tab, "Viewer");
  ASSERT_TRUE(w.viewer);
  EXPECT_EQ(*w.viewer,
            (WorkspaceViewer{3600.0, models::ModalityZeroing::ReturnsToGo, 3, 0.5, true, 180}));
  EXPECT_EQ(w.runs, std::vector<std::string>{"/home/me/runs/dt"});
  EXPECT_EQ(w.window_geometry, "AdnQywADAAAAAAAAAAAAAAeHAAAEEAAAAAAAAAAA");
  EXPECT_FALSE(w.attention);
  EXPECT_FALSE(w.markov_lab);
  EXPECT_FALSE(w.run);
  EXPECT_FALSE(w.comparison);
  EXPECT_TRUE(w.compare.empty());
}

// The workspaces tests/data/saved/workspace/ holds, as the studio wrote them.
Workspace saved_every_field() {
  Workspace w;
  w.dataset = "/data/d4rl/hopper_medium-v2.hdf5";
  w.checkpoint = "/runs/dt-seed0/checkpoint.pt";
  w.compare = "/runs/gdt-seed0/checkpoint.pt";
  w.comparison = WorkspaceComparison::SideBySide;
  w.tab = "attention";
  w.viewer = WorkspaceViewer{3600.0, models::ModalityZeroing::ReturnsToGo, 7, 0.5, true, 180};
  w.viewer->interventions = {"head:1.1=zero", "context:3"};
  w.viewer->forks = {"100:target=1200", "150:checkpoint=/runs/gdt-seed0/checkpoint.pt"};
  w.viewer->effects = false;
  w.attention = WorkspaceAttention{WorkspaceMap::MeanOverLayers, 2, 3};
  w.markov_lab = WorkspaceMarkovLab{0.2, 0.35, 2, 3, models::LabMixer::Convolution, 4, 600, true};
  w.run = WorkspaceRun::Ablation;
  w.runs = {"/runs/dt-seed0", "/runs/gdt seed0"};
  w.sweep = "/sweeps/table1";
  w.figures = {"/paper/fig2/rtg_sweep.recipe.json", "/paper/fig3/scores.recipe.json"};
  w.bookmarks = {
      {BookmarkPlace::Viewer, "", 283, "the hopper falls", "target 3600, head 1.1 zeroed"},
      {BookmarkPlace::Run, "/runs/dt-seed0", 40000, "loss plateau", ""}};
  w.window_geometry = "AdnQywADAAAAAAAAAAAAAAeHAAAEEAAAAAAAAAAA";
  w.window_state = "AAAA/wAAAAD9AAAAAAAAB4AAAAP0AAAABAAAAAQAAAAIAAAACPwAAAAA";
  return w;
}

Workspace saved_bookmarks() {
  Workspace w;
  w.checkpoint = "/runs/dt-seed0/checkpoint.pt";
  w.runs = {"/runs/dt-seed0", "/runs/dc-seed0"};
  w.bookmarks = {{BookmarkPlace::Viewer, "", 0, "the first step", ""},
                 {BookmarkPlace::Viewer, "", 100000, "the last step", "an episode's longest"},
                 {BookmarkPlace::Run, "/runs/dt-seed0", 1000000000, "the end of training",
                  "line one\nline two, \"quoted\", tab\there, \u00e9 \u00fc \u2211"},
                 {BookmarkPlace::Run, "/runs/dc-seed0", 25000, "warm-up ends", ""}};
  return w;
}

Workspace saved_partial() {
  Workspace w;
  w.dataset = "default";
  w.comparison = WorkspaceComparison::Difference;
  w.viewer = WorkspaceViewer{};
  w.viewer->target = -1e6;
  w.viewer->speed = 0.0;
  w.attention = WorkspaceAttention{};
  w.markov_lab = WorkspaceMarkovLab{};
  w.markov_lab->window = 256;
  w.run = WorkspaceRun::Sweep;
  return w;
}

TEST(Workspace, SavedFilesReadBackAndWriteTheSameBytes) {
  const std::vector<std::pair<std::string, Workspace>> files = {
      {"every-field.json", saved_every_field()},
      {"minimal.json", Workspace{}},
      {"bookmarks.json", saved_bookmarks()},
      {"partial.json", saved_partial()}};
  for (const auto& [name, expected] : files) {
    const std::string text = saved(name);
    ASSERT_FALSE(text.empty()) << name;
    Workspace w;
    ASSERT_NO_THROW(w = parse_workspace(text)) << name;
    EXPECT_EQ(w, expected) << name;
    EXPECT_EQ(to_json(w), text) << name;  // the studio writes what it wrote, byte for byte
    EXPECT_EQ(to_json(expected), text) << name;
  }
  // The same workspace through other writers: Qt's (keys sorted, whole numbers without a
  // fraction), and one that writes every number as a double (3.0 for 3).
  EXPECT_EQ(parse_workspace(saved("every-field.qt.json")), saved_every_field());
  EXPECT_EQ(parse_workspace(saved("every-field.doubles.json")), saved_every_field());
}

TEST(Workspace, EveryShippedLessonParses) {
  const auto index = embedded_resource("lessons/index.json");
  ASSERT_TRUE(index);
  const auto lessons = nlohmann::json::parse(*index).at("lessons");
  ASSERT_EQ(lessons.size(), 6U);
  int steps = 0;
  for (const auto& name : lessons) {
    const auto text = embedded_resource("lessons/" + name.get<std::string>());
    ASSERT_TRUE(text) << name;
    const auto lesson = nlohmann::json::parse(*text);
    for (const auto& step : lesson.at("steps")) {
      ++steps;
      Workspace w;
      ASSERT_NO_THROW(w = parse_workspace(step.at("workspace").dump()))
          << name << ": " << step.at("title");
      const Workspace resolved = resolve_resources(w, kResources);
      // Each shipped file a step names is there.
      for (const auto* path : {&resolved.checkpoint, &resolved.compare}) {
        if (!path->empty()) {
          EXPECT_TRUE(std::filesystem::exists(*path)) << *path;
        }
      }
      if (w.markov_lab) {
        EXPECT_NO_THROW((void)w.markov_lab->apply({})) << step.at("title");
      }
    }
  }
  EXPECT_EQ(steps, 17);

  // The surgery lessons' interventions and forks, value by value.
  const auto heads =
      nlohmann::json::parse(*embedded_resource("lessons/which-head-reads-the-return.json"));
  const Workspace ablated = parse_workspace(heads["steps"][1]["workspace"].dump());
  ASSERT_TRUE(ablated.viewer);
  EXPECT_EQ(ablated.viewer->interventions, std::vector<std::string>{"head:1.1=zero"});
  EXPECT_EQ(ablated.viewer->forks, std::vector<std::string>{"100:target=1200"});
  const auto far = nlohmann::json::parse(*embedded_resource("lessons/what-the-far-past-does.json"));
  const Workspace effects = parse_workspace(far["steps"][2]["workspace"].dump());
  ASSERT_TRUE(effects.viewer);
  EXPECT_EQ(effects.viewer->effects, true);
  EXPECT_EQ(effects.viewer->interventions, std::vector<std::string>{"context:1"});

  // Two steps, value by value.
  const auto disperses =
      nlohmann::json::parse(*embedded_resource("lessons/attention-disperses.json"));
  const Workspace gdt = parse_workspace(disperses["steps"][1]["workspace"].dump());
  EXPECT_EQ(gdt.dataset, "default");
  EXPECT_EQ(gdt.compare, "@resources/checkpoints/hopper-medium-expert-gdt.pt");
  EXPECT_EQ(gdt.comparison, WorkspaceComparison::SideBySide);
  EXPECT_EQ(gdt.attention, (WorkspaceAttention{WorkspaceMap::Layer, 1, 0}));
  EXPECT_EQ(resolve_resources(gdt, "/opt/r").compare,
            "/opt/r/checkpoints/hopper-medium-expert-gdt.pt");
  EXPECT_EQ(resolve_resources(gdt, "/opt/r").dataset, "default");

  const auto markov =
      nlohmann::json::parse(*embedded_resource("lessons/markov-pooling-floor.json"));
  const Workspace order2 = parse_workspace(markov["steps"][1]["workspace"].dump());
  ASSERT_TRUE(order2.markov_lab);
  EXPECT_EQ(order2.markov_lab->order, 2);
  EXPECT_EQ(order2.markov_lab->window, 1);
  EXPECT_EQ(order2.markov_lab->mixer, models::LabMixer::Pooling);
  EXPECT_TRUE(order2.markov_lab->train);
  const auto options = order2.markov_lab->apply({});
  EXPECT_EQ(options.chain.order, 2);
  EXPECT_DOUBLE_EQ(options.chain.p, 0.2);
  EXPECT_DOUBLE_EQ(options.chain.q, 0.3);
  EXPECT_EQ(options.window, 1);
  EXPECT_EQ(options.steps, 600);
}

TEST(Workspace, NamesTheKeyAndWhatIsWrong) {
  EXPECT_EQ(message_of(R"({"decision_studio_workspace": 1, "viewer": {"target": "abc"}})"),
            "workspace: viewer: target is not a number");
  EXPECT_EQ(message_of(R"({"decision_studio_workspace": 1, "viewer": {"seed": -1}})"),
            "workspace: viewer: seed must be at least 0 (is -1)");
  EXPECT_EQ(message_of(R"({"decision_studio_workspace": 1, "attention": {"map": "heads"}})"),
            "workspace: attention: map is 'heads', not one of layer, mean over layers, rollout");
  EXPECT_EQ(message_of(R"({"decision_studio_workspace": 1, "runs": [1]})"),
            "workspace: runs[0] is not a text");
  EXPECT_EQ(message_of(R"({"decision_studio_workspace": 1, "viewer": [1, 2]})"),
            "workspace: viewer: not a JSON object");
  EXPECT_EQ(
      message_of(R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 1, "on": "run"}]})"),
      "workspace: bookmarks[0]: no run (a bookmark on a run's curves names its run folder)");
}

TEST(Workspace, RefusesEveryWrongTypeAndRange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // the file as a whole
      {"", "not JSON"},
      {"{\"decision_studio_workspace\": 1", "not JSON"},
      {"[1]", "not a JSON object"},
      {R"({"decision_studio_workspace": 1, "viewer": {"target": 1e999}})",
       "not JSON"},  // beyond a double
      {"{}", "no decision_studio_workspace (not a Decision Studio workspace)"},
      {R"({"version": 1})", "no decision_studio_workspace"},
      {R"({"decision_studio_workspace": 2})",
       "decision_studio_workspace is 2: written by a newer Decision Studio (this one reads 1)"},
      {R"({"decision_studio_workspace": 1e9})", "newer Decision Studio"},
      {R"({"decision_studio_workspace": 2.5})", "decision_studio_workspace is not a whole number"},
      {R"({"decision_studio_workspace": 1e300})", "decision_studio_workspace is too large"},
      {R"({"decision_studio_workspace": null})", "decision_studio_workspace is not a number"},
      {R"({"decision_studio_workspace": 0})",
       "decision_studio_workspace must be at least 1 (is 0)"},
      {R"({"decision_studio_workspace": 0.5})", "decision_studio_workspace is not a whole number"},
      {R"({"decision_studio_workspace": "1"})", "decision_studio_workspace is not a number"},
      // paths and names
      {R"({"decision_studio_workspace": 1, "dataset": 5})", "dataset is not a text"},
      {R"({"decision_studio_workspace": 1, "dataset": ")" + std::string(4097, 'd') + "\"}",
       "dataset is 4097 bytes long, at most 4096"},
      // figures
      {R"({"decision_studio_workspace": 1, "figures": "a.json"})", "figures is not a list"},
      {R"({"decision_studio_workspace": 1, "figures": [""]})", "figures[0] is empty"},
      {R"({"decision_studio_workspace": 1, "figures": [)" + many(1001, "\"f.json\"") + "]}",
       "figures has 1001 items, at most 1000"},
      // bookmarks
      {R"({"decision_studio_workspace": 1, "bookmarks": [)" + many(1001, R"({"step": 1})") + "]}",
       "bookmarks has 1001 items, at most 1000"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [3]})", "bookmarks[0]: not a JSON object"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 1, "name": ""}]})",
       "bookmarks[0]: name is empty"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 1, "name": "a\nb"}]})",
       "bookmarks[0]: name is more than one line"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 1, "name": ")" +
           std::string(201, 'n') + "\"}]}",
       "bookmarks[0]: name is 201 bytes long, at most 200"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 1, "note": ")" +
           std::string(4001, 'n') + "\"}]}",
       "bookmarks[0]: note is 4001 bytes long, at most 4000"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 1, "note": "a\u0000"}]})",
       "bookmarks[0]: note holds a NUL character"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 1, "run": ""}]})",
       "bookmarks[0]: run is empty"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 1, "note": null}]})",
       "bookmarks[0]: note is null"},
      {R"({"decision_studio_workspace": 1, "bookmarks": {}})", "bookmarks is not a list"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"name": "x"}]})",
       "bookmarks[0]: no step"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 1, "on": "sky"}]})",
       "bookmarks[0]: on is 'sky', not one of viewer, run"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 200000}]})",
       "bookmarks[0]: step must be at most 100000 on the viewer, a step of an episode (is 200000)"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 5, "on": "run"}]})",
       "bookmarks[0]: no run (a bookmark on a run's curves names its run folder)"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": -1}]})",
       "bookmarks[0]: step must be at least 0 (is -1)"},
      {R"({"decision_studio_workspace": 1, "dataset": ""})", "dataset is empty"},
      {R"({"decision_studio_workspace": 1, "checkpoint": null})", "checkpoint is null"},
      {R"({"decision_studio_workspace": 1, "compare": "a\u0000b"})",
       "compare holds a NUL character"},
      {R"({"decision_studio_workspace": 1, "tab": true})", "tab is not a text"},
      {R"({"decision_studio_workspace": 1, "comparison": "overlay"})",
       "comparison is 'overlay', not one of side by side, difference"},
      {R"({"decision_studio_workspace": 1, "run": "train"})",
       "run is 'train', not one of sweep, ablation"},
      {R"({"decision_studio_workspace": 1, "runs": "/runs/a"})", "runs is not a list"},
      {R"({"decision_studio_workspace": 1, "sweep": 3})", "sweep is not a text"},
      {R"({"decision_studio_workspace": 1, "runs": ["/a", ""]})", "runs[1] is empty"},
      {R"({"decision_studio_workspace": 1, "window_geometry": "abc"})",
       "window_geometry is not base64 text"},
      {R"({"decision_studio_workspace": 1, "window_state": "ab=c"})",
       "window_state is not base64 text"},
      {R"({"decision_studio_workspace": 1, "window_state": "a!bc"})",
       "window_state is not base64 text"},
      {R"({"decision_studio_workspace": 1, "window_state": 12})", "window_state is not a text"},
      {R"({"decision_studio_workspace": 1, "comparison": null})", "comparison is null"},
      {R"({"decision_studio_workspace": 1, "window_state": null})", "window_state is null"},
      // viewer
      {R"({"decision_studio_workspace": 1, "viewer": null})", "viewer is null"},
      {R"({"decision_studio_workspace": 1, "viewer": {"seed": null}})", "viewer: seed is null"},
      {R"({"decision_studio_workspace": 1, "viewer": {"zeroing": null}})",
       "viewer: zeroing is null"},
      {R"({"decision_studio_workspace": 1, "viewer": {"interventions": [""]}})",
       "viewer: interventions[0]: "},
      {R"({"decision_studio_workspace": 1, "viewer": 3})", "viewer: not a JSON object"},
      {R"({"decision_studio_workspace": 1, "viewer": {"interventions": "head:1.1=zero"}})",
       "viewer: interventions is not a list"},
      {R"({"decision_studio_workspace": 1, "viewer": {"interventions": ["head:1=zero"]}})",
       "viewer: interventions[0]: head:1=zero"},
      {R"({"decision_studio_workspace": 1, "viewer": {"forks": ["100"]}})",
       "viewer: forks[0]: --fork 100: give STEP:CHANGE"},
      {R"({"decision_studio_workspace": 1, "viewer": {"forks": [1]}})",
       "viewer: forks[0] is not a text"},
      {R"({"decision_studio_workspace": 1, "viewer": {"forks": ["1:target=1", "2:target=2", "3:target=3", "4:target=4", "5:target=5"]}})",
       "viewer: forks has 5 forks, at most 4 play beside the main run"},
      {R"({"decision_studio_workspace": 1, "viewer": {"effects": "yes"}})",
       "viewer: effects is not true or false"},
      {R"({"decision_studio_workspace": 1, "viewer": {"target": 1e7}})",
       "viewer: target must be at most 1000000 (is 10000000)"},
      {R"({"decision_studio_workspace": 1, "viewer": {"zeroing": "everything"}})",
       "viewer: zeroing is 'everything', not one of none, rtg, states, actions"},
      {R"({"decision_studio_workspace": 1, "viewer": {"zeroing": 1}})",
       "viewer: zeroing is not a name (none, rtg, states, actions)"},
      {R"({"decision_studio_workspace": 1, "viewer": {"seed": 1000001}})",
       "viewer: seed must be at most 1000000 (is 1000001)"},
      {R"({"decision_studio_workspace": 1, "viewer": {"seed": 2.5}})",
       "viewer: seed is not a whole number"},
      {R"({"decision_studio_workspace": 1, "viewer": {"seed": 18446744073709551615}})",
       "viewer: seed is too large"},
      {R"({"decision_studio_workspace": 1, "viewer": {"speed": 3}})",
       "viewer: speed is 3, not one of 0.1, 0.25, 0.5, 1, 2, 4, 0 (0: as fast as the policy acts)"},
      {R"({"decision_studio_workspace": 1, "viewer": {"speed": "1x"}})",
       "viewer: speed is not a number"},
      {R"({"decision_studio_workspace": 1, "viewer": {"track": 1}})",
       "viewer: track is not true or false"},
      {R"({"decision_studio_workspace": 1, "viewer": {"step": 100001}})",
       "viewer: step must be at most 100000 (is 100001)"},
      {R"({"decision_studio_workspace": 1, "viewer": {"step": -1}})",
       "viewer: step must be at least 0 (is -1)"},
      {R"({"decision_studio_workspace": 1, "viewer": {"speed": null}})", "viewer: speed is null"},
      // attention
      {R"({"decision_studio_workspace": 1, "attention": {"layer": 0}})",
       "attention: layer must be at least 1 (is 0)"},
      {R"({"decision_studio_workspace": 1, "attention": {"head": -1}})",
       "attention: head must be at least 0 (is -1)"},
      {R"({"decision_studio_workspace": 1, "attention": "layer"})", "attention: not a JSON object"},
      // the Markov lab
      {R"({"decision_studio_workspace": 1, "markov_lab": {"p": 0}})",
       "markov_lab: p must be above 0 (is 0)"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"q": 1.0}})",
       "markov_lab: q must be below 1 (is 1)"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"order": 4}})",
       "markov_lab: order must be at most 3 (is 4)"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"states": 9}})",
       "markov_lab: states must be at most 8 (is 9)"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"mixer": "gru"}})",
       "markov_lab: mixer is 'gru', not one of pooling, attention, conv"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"window": 0}})",
       "markov_lab: window must be at least 1 (is 0)"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"steps": 0}})",
       "markov_lab: steps must be at least 1 (is 0)"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"p": null}})", "markov_lab: p is null"},
      {R"({"decision_studio_workspace": 1, "markov_lab": null})", "markov_lab is null"},
      {R"({"decision_studio_workspace": 1, "attention": null})", "attention is null"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"train": "yes"}})",
       "markov_lab: train is not true or false"},
  };
  // A file beyond the size a workspace may have is refused before it is read.
  EXPECT_NE(message_of(std::string(kMaxWorkspaceBytes + 1, ' ')).find("a workspace has at most"),
            std::string::npos);
  for (const auto& [text, expected] : cases) {
    const std::string message = message_of(text);
    EXPECT_EQ(message.rfind("workspace: ", 0), 0U) << text << " -> " << message;
    EXPECT_NE(message.find(expected), std::string::npos)
        << text << "\n  gave: " << message << "\n  expected: " << expected;
  }
}

TEST(Workspace, AcceptsWhatItMayAndIgnoresUnknownKeys) {
  // Keys a newer studio may add are ignored, at the top and inside the objects.
  const Workspace w = parse_workspace(
      R"({"decision_studio_workspace": 1, "future": {"x": [1, 2]}, "viewer": {"seed": 3.0, "new": true, "target": -1e6},
          "attention": {"map": "mean over layers", "extra": null}, "markov_lab": {"window": 256}})");
  ASSERT_TRUE(w.viewer);
  EXPECT_EQ(w.viewer->seed, 3);  // an integral double is an integer (Qt writes numbers as doubles)
  EXPECT_EQ(w.viewer->target, -1e6);
  EXPECT_FALSE(w.viewer->speed);
  EXPECT_EQ(w.attention, (WorkspaceAttention{WorkspaceMap::MeanOverLayers, 1, 0}));
  ASSERT_TRUE(w.markov_lab);
  EXPECT_EQ(w.markov_lab->window, 256);
  EXPECT_FALSE(w.markov_lab->train);
  EXPECT_EQ(parse_workspace(R"({"decision_studio_workspace": 1, "window_state": ""})").window_state,
            "");
}

TEST(Workspace, MarkovLabSettingsAreCheckedTogether) {
  WorkspaceMarkovLab lab;
  lab.window = 40;  // each on its own range, but longer than the lab's 32-symbol sequences
  EXPECT_THROW((void)lab.apply({}), UsageError);
  lab.window = 3;
  lab.states = 4;
  lab.p = 0.4;
  const auto options = lab.apply({});
  EXPECT_EQ(options.chain.states, 4);
  EXPECT_DOUBLE_EQ(options.chain.q,
                   0.4);  // a chain of more than two states has one switching probability
  EXPECT_EQ(options.window, 3);
}

TEST(Workspace, LongValuesAreCutInMessages) {
  const std::string long_name(500, 'x');
  const std::string message =
      message_of(R"({"decision_studio_workspace": 1, "run": ")" + long_name + "\"}");
  EXPECT_NE(message.find("..."), std::string::npos);
  EXPECT_LT(message.size(), 120U);
  // A cut never splits a UTF-8 character: the message is valid UTF-8.
  const std::string accents = message_of(R"({"decision_studio_workspace": 1, "run": ")" +
                                         std::string(30, 'a') + std::string(20, '\xC3') + "\"}");
  EXPECT_NE(accents.find("not JSON"), std::string::npos);  // invalid UTF-8 is not JSON
  std::string e_acute;
  for (int i = 0; i < 30; ++i) e_acute += "\xC3\xA9";
  const std::string cut =
      message_of(R"({"decision_studio_workspace": 1, "run": ")" + e_acute + "\"}");
  EXPECT_NO_THROW((void)nlohmann::json(cut).dump());
}

}  // namespace
}  // namespace dstudio
