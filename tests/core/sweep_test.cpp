// Sweeps as folders: a grid's cells (the cartesian product, extra axes, explicit cells), what a
// grid is refused for, the manifest's round trip, and each cell's task.json.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <set>

#include "dstudio/common/error.h"
#include "dstudio/sweep/sweep.h"
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
  EXPECT_EQ(nlohmann::json::parse(cells[0].config), nlohmann::json::parse(R"({"hidden": 16, "layers": 1})"));
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
  EXPECT_THAT(refusal(R"({"variant": ["dt"]})"), HasSubstr("no key \"variant\""));
  EXPECT_THAT(refusal(R"({"variants": ["dt"]})"), HasSubstr("\"datasets\""));
  EXPECT_THAT(refusal(R"({"variants": ["no-such"], "datasets": ["hopper-a.hdf5"]})"), HasSubstr("no-such"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["missing.hdf5"]})"), HasSubstr("missing.hdf5: no such file"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "seeds": [-1]})"), HasSubstr("whole number"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "config": {"hidden": -4}})"), HasSubstr("hidden"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "training": {"steps": 2.5}})"), HasSubstr("steps"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "training": {"seed": 4}})"), HasSubstr("\"seeds\""));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "axes": {"hidden": [1]}})"), HasSubstr("config.<field>"));
  EXPECT_THAT(refusal(R"({"variants": ["dt"], "datasets": ["hopper-a.hdf5"], "seeds": [1, 1]})"), HasSubstr("same run"));
  EXPECT_THAT(refusal(R"({"cells": [{"variant": "dt"}]})"), HasSubstr("cells[0]"));
  EXPECT_THAT(refusal(R"({})"), HasSubstr("no cells"));
  EXPECT_THAT(refusal(R"({"variants": [{"variant": "hier", "merger": 3}], "datasets": ["hopper-a.hdf5"]})"), HasSubstr("the grid"));
}

TEST_F(Sweeps, TheManifestRoundTripsAndAFolderHoldsOneSweep) {
  const std::string grid = R"({"variants": ["dt", "dc"], "datasets": ["hopper-a.hdf5"], "seeds": [0, 1], "training": {"steps": 30}})";
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
    EXPECT_EQ(nlohmann::json::parse(read.cells[i].training), nlohmann::json::parse(cells[i].training));
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

}  // namespace
}  // namespace dstudio::sweep
