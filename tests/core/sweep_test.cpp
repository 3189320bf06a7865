// Sweeps as folders: a grid's cells (the cartesian product, extra axes, explicit cells), what a
// grid is refused for, the manifest's round trip, and each cell's task.json.

#include "dstudio/sweep/sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "dstudio/common/error.h"
#include "h5_fixture.h"

namespace dstudio::sweep {
namespace {

using testing::HasSubstr;

class Sweeps : public testing::Test {
 protected:
  void SetUp() override {
    // Two "datasets": the grid checks they exist, not what they hold.
    for (const char* name : {"hopper-a.hdf5", "walker-b.hdf5"}) std::ofstream(dir_ / name) << "x";
  }
  std::vector<Cell> parse(const std::string& grid) { return parse_grid(grid, dir_.path()); }
  // The UsageError's message for `grid`, or "" when it is accepted.
  std::string refusal(const std::string& grid) {
    try {
      parse(grid);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }
  test::TempDir dir_;
};

TEST_F(Sweeps, AGridIsTheProductOfVariantsDatasetsAxesAndSeedsThenItsCells) {
  const auto cells = parse(R"({
    "variants": ["dt", {"variant": "hier", "merger": "pooling", "mixer": "conv", "config": {"hidden": 32}}],
    "datasets": ["hopper-a.hdf5", "walker-b.hdf5"],
    "seeds": [0, 7],
    "config": {"hidden": 16, "layers": 1},
    "training": {"steps": 40, "batch_size": 8},
    "axes": {"training.learning_rate": [0.001, 0.0001]},
    "cells": [{"variant": "dc", "dataset": "hopper-a.hdf5", "seed": 3, "training": {"steps": 20}}]
  })");
  ASSERT_EQ(cells.size(), 2u * 2u * 2u * 2u + 1u);
  for (std::size_t i = 0; i < cells.size(); ++i) EXPECT_EQ(cells[i].index, static_cast<int>(i));
  // Nesting: variant, dataset, axes, seed.
  EXPECT_EQ(cells[0].variant, "dt");
  EXPECT_EQ(cells[0].seed, 0u);
  EXPECT_EQ(cells[1].seed, 7u);
  EXPECT_EQ(nlohmann::json::parse(cells[0].training)["learning_rate"], 0.001);
  EXPECT_EQ(nlohmann::json::parse(cells[2].training)["learning_rate"], 0.0001);
  EXPECT_EQ(cells[4].dataset, (dir_.path() / "walker-b.hdf5").string());
  EXPECT_EQ(cells[0].dataset, (dir_.path() / "hopper-a.hdf5").string());
  // The grid's config under a variant's own.
  EXPECT_EQ(nlohmann::json::parse(cells[0].config),
            nlohmann::json::parse(R"({"hidden": 16, "layers": 1})"));
  EXPECT_EQ(cells[8].variant, "hier");
  EXPECT_EQ(cells[8].merger, "pooling");
  EXPECT_EQ(nlohmann::json::parse(cells[8].config)["hidden"], 32);
  EXPECT_EQ(nlohmann::json::parse(cells[8].training)["steps"], 40);
  // The explicit cell comes last, with the grid's settings under its own.
  const auto& last = cells.back();
  EXPECT_EQ(last.variant, "dc");
  EXPECT_EQ(last.seed, 3u);
  EXPECT_EQ(nlohmann::json::parse(last.training)["steps"], 20);
  EXPECT_EQ(nlohmann::json::parse(last.training)["batch_size"], 8);
  // Names are distinct folder names; seeds of one setting share a group, other settings do not.
  std::set<std::string> names, groups;
  for (const auto& c : cells) {
    EXPECT_EQ(c.name.find('/'), std::string::npos);
    names.insert(c.name);
    groups.insert(c.group);
  }
  EXPECT_EQ(names.size(), cells.size());
  EXPECT_EQ(groups.size(), 2u * 2u * 2u + 1u);
  EXPECT_EQ(cells[0].group, cells[1].group);
  EXPECT_THAT(cells[0].name, HasSubstr("dt-hopper-a-s0"));
  EXPECT_THAT(cells[8].name, HasSubstr("hier-pooling-conv"));
}

TEST_F(Sweeps, AGridIsRefusedNamingWhatIsWrong) {
  EXPECT_THAT(refusal("[1, 2]"), HasSubstr("JSON object"));
  EXPECT_THAT(refusal("{"), HasSubstr("not JSON"));
  EXPECT_THAT(refusal(R"({"variant": ["dt"]})"), HasSubstr("the grid: unknown key 'variant'"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"]})"),
              HasSubstr("the grid: datasets must list at least one dataset for the variants"));
  EXPECT_THAT(refusal(R"({"variants": ["no-such"], "datasets": ["hopper-a.hdf5"]})"),
              HasSubstr("no-such"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["missing.hdf5"]})"),
              HasSubstr("missing.hdf5: no such file"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "seeds": [-1]})"),
              HasSubstr("the grid: seeds[0] is -1, not a whole number in [0, 2^63 - 1]"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "seeds": []})"),
              HasSubstr("the grid: seeds must be a list of whole numbers"));
  EXPECT_THAT(refusal(R"({"variants": [], "datasets": ["hopper-a.hdf5"]})"),
              HasSubstr("the grid: variants must be a list of variants"));
  EXPECT_THAT(refusal(R"({"variants": [7], "datasets": ["hopper-a.hdf5"]})"),
              HasSubstr("the grid: variants[0] is 7, not a variant's name"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "config": [1]})"),
              HasSubstr("the grid: config is not a JSON object"));
  EXPECT_THAT(
      refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "eval_episodes": 1001})"),
      HasSubstr("the grid: eval_episodes must be at most 1000 (is 1001)"));
  EXPECT_THAT(
      refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "config": {"hidden": -4}})"),
      HasSubstr("hidden"));
  EXPECT_THAT(
      refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "training": {"steps": 2.5}})"),
      HasSubstr("steps"));
  EXPECT_THAT(
      refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "training": {"seed": 4}})"),
      HasSubstr("\"seeds\""));
  EXPECT_THAT(
      refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "axes": {"hidden": [1]}})"),
      HasSubstr("the grid: axes: 'hidden' is not config.<field> or training.<field>"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"],
                          "axes": {"config.hidden": []}})"),
              HasSubstr("the grid: axes.config.hidden must be a list of values"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "seeds": [1, 1]})"),
              HasSubstr("same run"));
  EXPECT_THAT(refusal(R"({"cells": [{"variant": "dt"}]})"),
              HasSubstr("the grid: cells[0]: no dataset"));
  EXPECT_THAT(refusal(R"({"cells": [{"variant": "dt", "dataset": "hopper-a.hdf5", "seed": 1.5}]})"),
              HasSubstr("the grid: cells[0]: seed is 1.5, not a whole number"));
  EXPECT_THAT(refusal(R"({})"), HasSubstr("no cells"));
  EXPECT_THAT(
      refusal(R"({"variants": [{"variant": "hier", "merger": 3}], "datasets": ["hopper-a.hdf5"]})"),
      HasSubstr("the grid: variants[0]: merger is not a text"));
  // Only the product needs seeds and datasets: explicit cells alone take an empty list of either.
  EXPECT_EQ(refusal(R"({"cells": [{"variant": "dt", "dataset": "hopper-a.hdf5"}], "seeds": [],
                        "datasets": [""]})"),
            "");
}

TEST_F(Sweeps, TheManifestRoundTripsAndAFolderHoldsOneSweep) {
  const std::string grid =
      R"({"variants": ["dt", "dc"], "datasets": ["hopper-a.hdf5"], "seeds": [0, 1], "training": {"steps": 30}})";
  const auto cells = parse(grid);
  const auto made = create_sweep(dir_ / "sweep", cells, grid);
  const auto read = read_sweep(dir_ / "sweep");
  ASSERT_EQ(read.cells.size(), cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(read.cells[i].name, cells[i].name);
    EXPECT_EQ(read.cells[i].variant, cells[i].variant);
    EXPECT_EQ(read.cells[i].dataset, cells[i].dataset);
    EXPECT_EQ(read.cells[i].seed, cells[i].seed);
    EXPECT_EQ(nlohmann::json::parse(read.cells[i].config), nlohmann::json::parse(cells[i].config));
    EXPECT_EQ(nlohmann::json::parse(read.cells[i].training),
              nlohmann::json::parse(cells[i].training));
    EXPECT_EQ(read.cells[i].group, cells[i].group);
    EXPECT_TRUE(std::filesystem::is_directory(cell_dir(read, read.cells[i])));
  }
  EXPECT_EQ(nlohmann::json::parse(read.grid), nlohmann::json::parse(grid));
  // The same sweep again changes nothing; another one is refused; a damaged manifest is named.
  EXPECT_NO_THROW(create_sweep(dir_ / "sweep", cells, grid));
  const auto other = parse(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"]})");
  EXPECT_THROW(create_sweep(dir_ / "sweep", other, "{}"), UsageError);
  std::ofstream(dir_ / "sweep" / "sweep.json") << "{\"format\": \"dstudio-sweep\", \"cells\": [";
  try {
    (void)read_sweep(dir_ / "sweep");
    ADD_FAILURE() << "a damaged manifest was read";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("sweep.json"));
  }
  EXPECT_THROW(read_sweep(dir_ / "nowhere"), Error);
}

TEST_F(Sweeps, ACellsStatusRoundTripsAndIsPendingWithoutOne) {
  const std::string grid = R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"]})";
  const auto sweep = create_sweep(dir_ / "s", parse(grid), grid);
  const auto& cell = sweep.cells.front();
  auto st = read_cell_status(sweep, cell);
  EXPECT_EQ(st.state, CellState::Pending);
  EXPECT_TRUE(std::isnan(st.loss));
  st.state = CellState::Running;
  st.step = 12;
  st.total = 40;
  st.loss = 0.25;
  st.host = "node1";
  st.pid = 4242;
  st.slurm_job = "17_0";
  st.restarts = 2;
  write_cell_status(sweep, cell, st);
  const auto back = read_cell_status(sweep, cell);
  EXPECT_EQ(back.state, CellState::Running);
  EXPECT_EQ(back.step, 12);
  EXPECT_EQ(back.total, 40);
  EXPECT_DOUBLE_EQ(back.loss, 0.25);
  EXPECT_EQ(back.host, "node1");
  EXPECT_EQ(back.pid, 4242);
  EXPECT_EQ(back.slurm_job, "17_0");
  EXPECT_EQ(back.restarts, 2);
  EXPECT_FALSE(back.updated.empty());
  std::ofstream(cell_dir(sweep, cell) / "task.json") << "{oops";
  const auto damaged = read_cell_status(sweep, cell);
  EXPECT_EQ(damaged.state, CellState::Failed);
  EXPECT_THAT(damaged.error, HasSubstr("task.json"));
  EXPECT_STREQ(to_string(CellState::Finished), "finished");
}

const std::filesystem::path kSaved = std::filesystem::path(DSTUDIO_TEST_DATA) / "saved" / "sweep";

std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Sweep folders as the studio writes them (tests/data/saved/sweep; its README says how they were
// made): the manifest and every cell's task.json read back and are written again byte for byte.
TEST(SavedSweeps, ManifestsAndTaskFilesReadBackAndAreWrittenAgainByteForByte) {
  for (const char* name : {"table1", "gone"}) {
    const auto sweep = read_sweep(kSaved / name);
    EXPECT_EQ(to_json(sweep), text_of(kSaved / name / "sweep.json")) << name;
    int tasks = 0;
    for (const auto& cell : sweep.cells) {
      const auto path = cell_dir(sweep, cell) / "task.json";
      if (!std::filesystem::exists(path)) continue;
      ++tasks;
      const auto st = read_cell_status(sweep, cell);
      EXPECT_TRUE(st.problems.empty()) << path;
      EXPECT_THAT(st.error, testing::Not(HasSubstr("damaged"))) << path;
      EXPECT_EQ(to_json(st), text_of(path)) << path;
    }
    EXPECT_GT(tasks, 0) << name;
  }
  const auto table1 = read_sweep(kSaved / "table1");
  ASSERT_EQ(table1.cells.size(), 9u);
  EXPECT_EQ(table1.eval_episodes, 1);
  EXPECT_EQ(table1.created, "2026-11-30T06:23:04Z");
  // Overrides keep the order of the grid's keys.
  EXPECT_EQ(table1.cells[8].config, R"({"layers":1,"hidden":16,"context_length":5,"heads":2})");
  EXPECT_EQ(table1.cells[8].training,
            R"({"steps":30,"batch_size":4,"log_every":10,"eval_every":20,"checkpoint_every":20})");
  const auto finished = read_cell_status(table1, table1.cells[0]);
  EXPECT_EQ(finished.state, CellState::Finished);
  EXPECT_EQ(finished.step, 40);
  EXPECT_EQ(finished.slurm_job, "2_0");
  EXPECT_TRUE(std::isfinite(finished.score) && std::isfinite(finished.best_score));
  const auto gone = read_sweep(kSaved / "gone");
  ASSERT_EQ(gone.cells.size(), 1u);
  EXPECT_EQ(gone.eval_episodes, 0);
  const auto failed = read_cell_status(gone, gone.cells[0]);
  EXPECT_EQ(failed.state, CellState::Failed);
  EXPECT_TRUE(std::isnan(failed.loss));
  EXPECT_TRUE(std::isnan(failed.score));
  EXPECT_THAT(failed.error, HasSubstr("hopper-gone.hdf5: no such file"));
}

// The grid a saved sweep was made from gives its cells again (names, overrides in their order,
// groups), and creating that sweep again where the saved manifest lies changes nothing.
TEST(SavedSweeps, TheGridGivesTheSavedCellsAgain) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "data");
  for (const char* name : {"hopper-random.hdf5", "hopper-random-b.hdf5"})
    std::ofstream(dir / "data" / name) << "x";
  const std::string grid = text_of(kSaved / "table1-grid.json");
  EXPECT_EQ(grid_eval_episodes(grid), 1);
  auto cells = parse_grid(grid, dir.path());
  const auto saved = read_sweep(kSaved / "table1");
  ASSERT_EQ(cells.size(), saved.cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto &c = cells[i], &s = saved.cells[i];
    EXPECT_EQ(c.index, s.index);
    EXPECT_EQ(c.name, s.name);
    EXPECT_EQ(c.variant, s.variant);
    EXPECT_EQ(c.merger, s.merger);
    EXPECT_EQ(c.mixer, s.mixer);
    EXPECT_EQ(c.seed, s.seed);
    EXPECT_EQ(c.config, s.config);
    EXPECT_EQ(c.training, s.training);
    EXPECT_EQ(c.group, s.group);
    EXPECT_EQ(std::filesystem::path(c.dataset).filename(),
              std::filesystem::path(s.dataset).filename());
  }
  // The datasets where the saved sweep was made, as they were found there.
  for (std::size_t i = 0; i < cells.size(); ++i) cells[i].dataset = saved.cells[i].dataset;
  std::filesystem::create_directories(dir / "again");
  std::filesystem::copy_file(kSaved / "table1" / "sweep.json", dir / "again" / "sweep.json");
  EXPECT_NO_THROW(create_sweep(dir / "again", cells, grid));
  EXPECT_EQ(text_of(dir / "again" / "sweep.json"), text_of(kSaved / "table1" / "sweep.json"));
}

// A manifest keeps its grid as given: a key a later studio adds to grids is left alone there,
// though a grid a user writes with it is refused; a grid that is wrong there is a damaged manifest.
TEST(SavedSweeps, AManifestsGridIsReadAsKeptThere) {
  test::TempDir dir;
  auto m = nlohmann::ordered_json::parse(text_of(kSaved / "table1" / "sweep.json"));
  m["grid"]["later"] = true;
  std::ofstream(dir / "sweep.json") << m.dump(2);
  const auto s = read_sweep(dir.path());
  EXPECT_EQ(s.eval_episodes, 1);
  EXPECT_EQ(s.cells.size(), 9u);
  try {
    (void)parse_grid(m["grid"].dump(), dir.path());
    ADD_FAILURE() << "a grid with an unknown key was read";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the grid: unknown key 'later'"));
  }
  m["grid"]["eval_episodes"] = -1;
  std::ofstream(dir / "sweep.json", std::ios::trunc) << m.dump(2);
  try {
    (void)read_sweep(dir.path());
    ADD_FAILURE() << "a damaged manifest was read";
  } catch (const UsageError& e) {
    ADD_FAILURE() << "a damaged manifest is not a wrong request: " << e.what();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("sweep.json: grid: eval_episodes must be at least 0 (is -1)"));
  }
  // A cell out of its place is named.
  m = nlohmann::ordered_json::parse(text_of(kSaved / "table1" / "sweep.json"));
  m["cells"][1]["index"] = 5;
  std::ofstream(dir / "sweep.json", std::ios::trunc) << m.dump(2);
  EXPECT_THROW(
      {
        try {
          (void)read_sweep(dir.path());
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr("sweep.json: cells[1] is out of order or misnamed"));
          throw;
        }
      },
      Error);
}

// Collecting: each group's mean and spread over the seeds of its finished cells, and the paper's
// table, computed here by hand from the scores written into the cells.
TEST_F(Sweeps, CollectPoolsSeedsIntoGroupsAndATable) {
  const std::string grid =
      R"({"variants": ["dt", "dc"], "datasets": ["hopper-a.hdf5", "walker-b.hdf5"], "seeds": [0, 1, 2]})";
  const auto sweep = create_sweep(dir_ / "table", parse(grid), grid);
  ASSERT_EQ(sweep.cells.size(), 12u);
  // dt on hopper-a: 50, 60, 70 (best 80, 90, 100); dc on hopper-a: 40, 44 finished and one running;
  // dt on walker-b: 10 with no periodic evaluation; dc on walker-b: nothing finished.
  const auto finish = [&](int index, double score, double best) {
    CellStatus st;
    st.state = CellState::Finished;
    st.step = st.total = 30;
    st.score = score;
    st.score_std = 1.0;
    st.best_score = best;
    write_cell_status(sweep, sweep.cells[static_cast<std::size_t>(index)], st);
    std::ofstream(cell_dir(sweep, sweep.cells[static_cast<std::size_t>(index)]) / "checkpoint.pt")
        << "a finished cell's";
  };
  finish(0, 50, 80);
  finish(1, 60, 90);
  finish(2, 70, 100);
  finish(6, 40, std::nan(""));
  finish(7, 44, std::nan(""));
  CellStatus running;
  running.state = CellState::Running;
  write_cell_status(sweep, sweep.cells[8], running);
  finish(3, 10, std::nan(""));
  const auto groups = collect_groups(sweep);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].setting, "dt");
  EXPECT_EQ(groups[0].dataset, "hopper-a");
  EXPECT_EQ(groups[0].cells, 3);
  EXPECT_EQ(groups[0].finished, 3);
  EXPECT_DOUBLE_EQ(groups[0].score_mean, 60.0);
  EXPECT_DOUBLE_EQ(groups[0].score_std, 10.0);  // sample standard deviation of 50, 60, 70
  EXPECT_DOUBLE_EQ(groups[0].best_mean, 90.0);
  EXPECT_EQ(groups[1].dataset, "walker-b");
  EXPECT_EQ(groups[1].finished, 1);
  EXPECT_DOUBLE_EQ(groups[1].score_mean, 10.0);
  EXPECT_DOUBLE_EQ(groups[1].score_std, 0.0);
  EXPECT_TRUE(std::isnan(groups[1].best_mean));
  EXPECT_EQ(groups[2].setting, "dc");
  EXPECT_EQ(groups[2].finished, 2);
  EXPECT_DOUBLE_EQ(groups[2].score_mean, 42.0);
  EXPECT_NEAR(groups[2].score_std, std::sqrt(8.0), 1e-12);
  EXPECT_EQ(groups[3].finished, 0);
  EXPECT_TRUE(std::isnan(groups[3].score_mean));

  const auto table = latex_table(groups);
  EXPECT_THAT(table, HasSubstr("Dataset & dt & dc \\\\"));
  // A group whose seeds have not all finished says how many have.
  EXPECT_THAT(table,
              HasSubstr("hopper-a & \\textbf{60.0 $\\pm$ 10.0} & 42.0 $\\pm$ 2.8 (2 of 3) \\\\"));
  EXPECT_THAT(table, HasSubstr("walker-b & \\textbf{10.0 $\\pm$ 0.0} (1 of 3) & -- \\\\"));
  EXPECT_THAT(table, HasSubstr("\\toprule"));
  // Fields every cell shares stay out of the column names; those that vary name them.
  const std::string varied =
      R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "config": {"layers": 1},
                                 "axes": {"config.hidden": [16, 32]}})";
  const auto columns = collect_groups(create_sweep(dir_ / "varied", parse(varied), varied));
  ASSERT_EQ(columns.size(), 2u);
  EXPECT_EQ(columns[0].setting, "dt hidden=16");
  EXPECT_EQ(columns[1].setting, "dt hidden=32");
  EXPECT_THAT(table, HasSubstr("\\bottomrule"));
}

// rliable's statistics of a sweep, worked by hand: each group's IQM over its seeds, each setting's
// aggregates over its datasets and seeds, the probability of improvement of dt over dc, and
// their performance profiles, each interval around its estimate.
TEST_F(Sweeps, CollectGivesEachGroupsIqmAndEachSettingsRliableStatistics) {
  const std::string grid =
      R"({"variants": ["dt", "dc"], "datasets": ["hopper-a.hdf5", "walker-b.hdf5"], "seeds": [0, 1, 2, 3]})";
  const auto sweep = create_sweep(dir_ / "rliable", parse(grid), grid);
  ASSERT_EQ(sweep.cells.size(), 16u);
  // Cells in the order variants x datasets x seeds: dt hopper-a 10..40 (best 5 more), dt walker-b
  // 50..80, dc hopper-a 5..35, dc walker-b 45..75.
  const double finals[] = {10, 20, 30, 40, 50, 60, 70, 80, 5, 15, 25, 35, 45, 55, 65, 75};
  for (std::size_t k = 0; k < 16; ++k) {
    CellStatus st;
    st.state = CellState::Finished;
    st.step = st.total = 30;
    st.score = finals[k];
    st.best_score = finals[k] + 5;
    write_cell_status(sweep, sweep.cells[k], st);
    std::ofstream(cell_dir(sweep, sweep.cells[k]) / "checkpoint.pt") << "a finished cell's";
  }
  const auto groups = collect_groups(sweep);
  ASSERT_EQ(groups.size(), 4u);
  // IQM of 10, 20, 30, 40: a quarter (one) cut from each end, the mean of 20 and 30.
  EXPECT_DOUBLE_EQ(groups[0].score_iqm.estimate, 25.0);
  EXPECT_DOUBLE_EQ(groups[0].best_iqm.estimate, 30.0);
  for (const auto& g : groups) {
    EXPECT_LE(g.score_iqm.low, g.score_iqm.estimate) << g.group;
    EXPECT_GE(g.score_iqm.high, g.score_iqm.estimate) << g.group;
    EXPECT_GE(g.score_iqm.low, g.scores.front()) << "no resample's IQM is below the lowest seed";
    EXPECT_LE(g.score_iqm.high, g.scores.back());
  }

  const auto aggregates = aggregate_settings(groups);
  ASSERT_EQ(aggregates.size(), 2u);
  ASSERT_TRUE(aggregates[0].last && aggregates[0].best);
  EXPECT_EQ(aggregates[0].datasets, (std::vector<std::string>{"hopper-a", "walker-b"}));
  // dt's eight scores 10..80: two cut from each end, the mean of 30, 40, 50, 60.
  EXPECT_DOUBLE_EQ(aggregates[0].last->iqm.estimate, 45.0);
  // The mean and the median of the task means 25 and 65.
  EXPECT_DOUBLE_EQ(aggregates[0].last->mean.estimate, 45.0);
  EXPECT_DOUBLE_EQ(aggregates[0].last->median.estimate, 45.0);
  // The shortfall below 100: 75 on hopper-a, 35 on walker-b.
  EXPECT_DOUBLE_EQ(aggregates[0].last->optimality_gap.estimate, 55.0);
  EXPECT_DOUBLE_EQ(aggregates[0].best->iqm.estimate, 50.0);
  EXPECT_DOUBLE_EQ(aggregates[1].last->iqm.estimate, 40.0);  // 25, 35, 45, 55

  const auto pairs = setting_improvements(groups);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].x, "dt");
  EXPECT_EQ(pairs[0].y, "dc");
  ASSERT_TRUE(pairs[0].last);
  // On each dataset dt's seeds beat dc's in 1 + 2 + 3 + 4 of the 16 pairs.
  EXPECT_DOUBLE_EQ(pairs[0].last->estimate, 0.625);
  EXPECT_LE(pairs[0].last->low, 0.625);
  EXPECT_GE(pairs[0].last->high, 0.625);
  EXPECT_GE(pairs[0].last->low, 0.0);
  EXPECT_LE(pairs[0].last->high, 1.0);

  const auto profiles = setting_profiles(groups, false);
  ASSERT_EQ(profiles.size(), 2u);
  ASSERT_EQ(profiles[1].points.size(), 101u);
  // At the lowest score, 5: all of dt's runs are above it; dc's 3 of 4 on hopper-a, 4 of 4 on
  // walker-b.
  EXPECT_DOUBLE_EQ(profiles[0].points.front().tau, 5.0);
  EXPECT_DOUBLE_EQ(profiles[0].points.front().fraction, 1.0);
  EXPECT_DOUBLE_EQ(profiles[1].points.front().fraction, 0.875);
  EXPECT_DOUBLE_EQ(profiles[1].points.back().tau, 80.0);
  EXPECT_DOUBLE_EQ(profiles[1].points.back().fraction, 0.0);

  const auto table = latex_iqm_table(groups, aggregates);
  EXPECT_THAT(table, HasSubstr("& \\multicolumn{2}{c}{dt} & \\multicolumn{2}{c}{dc} \\\\"));
  // Four seeds a group: every IQM trims, and nothing needs saying of it.
  EXPECT_THAT(table, testing::Not(HasSubstr("trims nothing")));
  EXPECT_THAT(table, HasSubstr("hopper-a & 25.0 ["));
  EXPECT_THAT(table, HasSubstr("All & 45.0 ["));
}

// The IQM trims floor(n / 4) runs from each end: below 4 runs it trims nothing and is their mean,
// which whatever shows it says; a median over one dataset is that dataset's mean.
TEST(SweepNotes, AnIqmOverFewerThanFourRunsIsSaidToBeTheirMean) {
  EXPECT_EQ(iqm_note({4, 5, 12}), "");
  EXPECT_EQ(iqm_note({3, 4}), "IQM over fewer than 4 runs trims nothing: over 3 it is their mean.");
  EXPECT_EQ(iqm_note({0, 2, 3, 3}),
            "IQM over fewer than 4 runs trims nothing: over 2 or 3 it is their mean.");
  // The note is true: the IQM of three runs is their mean, of four it is not.
  EXPECT_DOUBLE_EQ(analysis::aggregate_iqm({{1.0, 2.0, 9.0}}), 4.0);
  EXPECT_DOUBLE_EQ(analysis::aggregate_iqm({{1.0, 2.0, 3.0, 10.0}}), 2.5);
  analysis::AggregateSummary three, eight;
  three.runs = 3;
  three.tasks = 1;
  eight.runs = 8;
  eight.tasks = 2;
  EXPECT_EQ(aggregates_note({eight}), "");
  EXPECT_EQ(aggregates_note({eight, three}),
            "IQM over fewer than 4 runs trims nothing: over 3 it is their mean. The median over "
            "one dataset is that dataset's mean.");
  // The IQM table tells its caption so when a group has three seeds.
  GroupResult g;
  g.group = "g";
  g.dataset = "hopper";
  g.setting = "dt";
  g.scores = {60, 64, 71};
  g.score_iqm = {65.0, 60.0, 71.0};
  EXPECT_THAT(latex_iqm_table({g}, {}),
              HasSubstr("% For the caption: IQM over fewer than 4 runs trims nothing: over 3 it "
                        "is their mean."));
}

}  // namespace
}  // namespace dstudio::sweep
