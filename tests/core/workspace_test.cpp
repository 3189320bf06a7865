// Workspace files: every key the studio writes reads back equal, every shipped lesson parses, and
// each wrong type or value out of range is refused with a message naming the key.

#include "dstudio/common/workspace.h"

#include <gtest/gtest.h>

#include <filesystem>
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

TEST(Workspace, NamesTheKeyAndTheValueItRefuses) {
  EXPECT_EQ(message_of(R"({"decision_studio_workspace": 1, "viewer": {"target": "abc"}})"),
            R"(workspace: "viewer.target" must be a number, not "abc")");
  EXPECT_EQ(message_of(R"({"decision_studio_workspace": 1, "viewer": {"seed": -1}})"),
            R"(workspace: "viewer.seed" must be an integer in [0, 1000000], not -1)");
  EXPECT_EQ(
      message_of(R"({"decision_studio_workspace": 1, "attention": {"map": "heads"}})"),
      R"(workspace: "attention.map" must be "layer", "mean over layers" or "rollout", not "heads")");
  EXPECT_EQ(message_of(R"({"decision_studio_workspace": 1, "runs": [1]})"),
            R"(workspace: "runs[0]" must be a string, not 1)");
  EXPECT_EQ(message_of(R"({"decision_studio_workspace": 1, "viewer": [1, 2]})"),
            R"(workspace: "viewer" must be an object, not an array)");
}

TEST(Workspace, RefusesEveryWrongTypeAndRange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // the file as a whole
      {"", "not JSON"},
      {"{\"decision_studio_workspace\": 1", "not JSON"},
      {"[1]", "not a JSON object"},
      {R"({"decision_studio_workspace": 1, "viewer": {"target": 1e999}})",
       "not JSON"},  // beyond a double
      {"{}", "no \"decision_studio_workspace\" key"},
      {R"({"version": 1})", "no \"decision_studio_workspace\" key"},
      {R"({"decision_studio_workspace": 2})",
       "newer Decision Studio (workspace version 2, this one reads 1)"},
      {R"({"decision_studio_workspace": 1e9})", "newer Decision Studio"},
      {R"({"decision_studio_workspace": 0})",
       "\"decision_studio_workspace\" must be an integer in [1, 1]"},
      {R"({"decision_studio_workspace": 0.5})", "\"decision_studio_workspace\" must be an integer"},
      {R"({"decision_studio_workspace": "1"})", "\"decision_studio_workspace\" must be an integer"},
      // paths and names
      {R"({"decision_studio_workspace": 1, "dataset": 5})", "\"dataset\" must be a string, not 5"},
      // figures
      {R"({"decision_studio_workspace": 1, "figures": "a.json"})",
       "\"figures\" must be an array of paths"},
      {R"({"decision_studio_workspace": 1, "figures": [""]})",
       "\"figures[0]\" must be a non-empty string"},
      // bookmarks
      {R"({"decision_studio_workspace": 1, "bookmarks": {}})", "\"bookmarks\" must be an array"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"name": "x"}]})",
       "\"bookmarks[0]\" has no \"step\""},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 1, "on": "sky"}]})",
       "\"bookmarks[0].on\" must be \"viewer\" or \"run\""},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 200000}]})",
       "\"bookmarks[0].step\" must be a step of an episode, 0 to 100000"},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": 5, "on": "run"}]})",
       "\"bookmarks[0]\" is on a run's curves but names no \"run\""},
      {R"({"decision_studio_workspace": 1, "bookmarks": [{"step": -1}]})",
       "\"bookmarks[0].step\" must be an integer"},
      {R"({"decision_studio_workspace": 1, "dataset": ""})",
       "\"dataset\" must be a non-empty string"},
      {R"({"decision_studio_workspace": 1, "checkpoint": null})",
       "\"checkpoint\" must be a string, not null"},
      {R"({"decision_studio_workspace": 1, "compare": "a\u0000b"})",
       "\"compare\" must be a string without NUL"},
      {R"({"decision_studio_workspace": 1, "tab": true})", "\"tab\" must be a string, not true"},
      {R"({"decision_studio_workspace": 1, "comparison": "overlay"})",
       "\"comparison\" must be \"side by side\" or \"difference\""},
      {R"({"decision_studio_workspace": 1, "run": "train"})",
       "\"run\" must be \"sweep\" or \"ablation\", not \"train\""},
      {R"({"decision_studio_workspace": 1, "runs": "/runs/a"})",
       "\"runs\" must be an array of paths"},
      {R"({"decision_studio_workspace": 1, "sweep": 3})", "\"sweep\" must be a string, not 3"},
      {R"({"decision_studio_workspace": 1, "runs": ["/a", ""]})",
       "\"runs[1]\" must be a non-empty string"},
      {R"({"decision_studio_workspace": 1, "window_geometry": "abc"})",
       "\"window_geometry\" must be base64 text"},
      {R"({"decision_studio_workspace": 1, "window_state": "ab=c"})",
       "\"window_state\" must be base64 text"},
      {R"({"decision_studio_workspace": 1, "window_state": "a!bc"})",
       "\"window_state\" must be base64 text"},
      {R"({"decision_studio_workspace": 1, "window_state": 12})",
       "\"window_state\" must be base64 text"},
      // viewer
      {R"({"decision_studio_workspace": 1, "viewer": 3})", "\"viewer\" must be an object, not 3"},
      {R"({"decision_studio_workspace": 1, "viewer": {"interventions": "head:1.1=zero"}})",
       "\"viewer.interventions\" must be a list of strings"},
      {R"({"decision_studio_workspace": 1, "viewer": {"interventions": ["head:1=zero"]}})",
       "\"viewer.interventions\": head:1=zero"},
      {R"({"decision_studio_workspace": 1, "viewer": {"forks": ["100"]}})",
       "\"viewer.forks\": --fork 100: give STEP:CHANGE"},
      {R"({"decision_studio_workspace": 1, "viewer": {"forks": [1]}})",
       "\"viewer.forks\" must be a list of strings"},
      {R"({"decision_studio_workspace": 1, "viewer": {"forks": ["1:target=1", "2:target=2", "3:target=3", "4:target=4", "5:target=5"]}})",
       "at most 4 play beside the main run"},
      {R"({"decision_studio_workspace": 1, "viewer": {"effects": "yes"}})",
       "\"viewer.effects\" must be true or false"},
      {R"({"decision_studio_workspace": 1, "viewer": {"target": 1e7}})",
       "\"viewer.target\" must be in [-1000000.0, 1000000.0]"},
      {R"({"decision_studio_workspace": 1, "viewer": {"zeroing": "everything"}})",
       "\"viewer.zeroing\" must be \"none\", \"rtg\", \"states\" or \"actions\""},
      {R"({"decision_studio_workspace": 1, "viewer": {"zeroing": 1}})",
       "\"viewer.zeroing\" must be"},
      {R"({"decision_studio_workspace": 1, "viewer": {"seed": 1000001}})",
       "\"viewer.seed\" must be an integer in [0, 1000000]"},
      {R"({"decision_studio_workspace": 1, "viewer": {"seed": 2.5}})",
       "\"viewer.seed\" must be an integer"},
      {R"({"decision_studio_workspace": 1, "viewer": {"seed": 18446744073709551615}})",
       "\"viewer.seed\" must be an integer"},
      {R"({"decision_studio_workspace": 1, "viewer": {"speed": 3}})",
       "\"viewer.speed\" must be one of 0.1, 0.25, 0.5, 1, 2, 4 or 0"},
      {R"({"decision_studio_workspace": 1, "viewer": {"speed": "1x"}})",
       "\"viewer.speed\" must be a number"},
      {R"({"decision_studio_workspace": 1, "viewer": {"track": 1}})",
       "\"viewer.track\" must be true or false, not 1"},
      {R"({"decision_studio_workspace": 1, "viewer": {"step": 100001}})",
       "\"viewer.step\" must be an integer in [0, 100000]"},
      {R"({"decision_studio_workspace": 1, "viewer": {"step": -1}})",
       "\"viewer.step\" must be an integer in [0, 100000]"},
      // attention
      {R"({"decision_studio_workspace": 1, "attention": {"layer": 0}})",
       "\"attention.layer\" must be an integer in [1, 1000]"},
      {R"({"decision_studio_workspace": 1, "attention": {"head": -1}})",
       "\"attention.head\" must be an integer in [0, 1000]"},
      {R"({"decision_studio_workspace": 1, "attention": "layer"})",
       "\"attention\" must be an object"},
      // the Markov lab
      {R"({"decision_studio_workspace": 1, "markov_lab": {"p": 0}})",
       "\"markov_lab.p\" must be in (0, 1), not 0"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"q": 1.0}})",
       "\"markov_lab.q\" must be in (0, 1)"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"order": 4}})",
       "\"markov_lab.order\" must be an integer in [1, 3]"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"states": 9}})",
       "\"markov_lab.states\" must be an integer in [2, 8]"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"mixer": "gru"}})",
       "\"markov_lab.mixer\" must be \"pooling\", \"attention\" or \"conv\""},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"window": 0}})",
       "\"markov_lab.window\" must be an integer in [1, 256]"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"steps": 0}})",
       "\"markov_lab.steps\" must be an integer in [1, 100000]"},
      {R"({"decision_studio_workspace": 1, "markov_lab": {"train": "yes"}})",
       "\"markov_lab.train\" must be true or false"},
  };
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
