// Goal-reaching datasets in the Dataset tab: Minari's antmaze is named as the other task it is,
// before anything else, and a D4RL antmaze file says how many of its episodes reach the goal.

#include <gtest/gtest.h>

#include <QLabel>
#include <QTreeWidget>
#include <memory>

#include "dstudio/data/dataset_io.h"
#include "dstudio/viz/dataset_view.h"
#include "h5_fixture.h"
#include "test_application.h"

namespace dstudio::studio {
namespace {

class GoalDatasets : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }
  static QString value_of(viz::DatasetView& view, const QString& key) {
    const auto rows = view.summary()->findItems(key, Qt::MatchRecursive | Qt::MatchExactly);
    return rows.size() == 1 ? rows.front()->text(1) : QString();
  }
  test::TempDir dir;
};

TEST_F(GoalDatasets, MinarisAntmazeIsNamedAsAnotherTaskFirst) {
  const auto file = dir / "D4RL" / "antmaze" / "umaze-v1" / "data" / "main_data.hdf5";
  test::write_minari_antmaze_fixture(file);
  viz::DatasetView view;
  view.show();
  view.setDataset(std::make_shared<data::Dataset>(data::load_dataset(file)));
  ASSERT_TRUE(view.warningsBanner()->isVisible());
  const QString text = view.warningsBanner()->text();
  EXPECT_TRUE(text.startsWith(QStringLiteral("⚠ <b>Another task:</b>"))) << text.toStdString();
  EXPECT_TRUE(text.contains("not D4RL's antmaze")) << text.toStdString();
  // Not a D4RL task: no D4RL normalised score is offered for it.
  EXPECT_TRUE(value_of(view, "Normalised mean (D4RL)").isEmpty());
}

// A D4RL antmaze file (D4RL's name, no metadata): two episodes at the goal, one not.
TEST_F(GoalDatasets, AnAntmazeFileSaysHowManyEpisodesReachTheGoal) {
  test::D4rlSpec spec;
  spec.n = 9;
  spec.obs_dim = 29;
  spec.act_dim = 8;
  spec.terminals.assign(9, 0);
  spec.timeouts.assign(9, 0);
  spec.timeouts[2] = spec.timeouts[5] = spec.timeouts[8] = 1;
  const auto file =
      dir / "Ant_maze_u-maze_noisy_multistart_False_multigoal_False_sparse_fixed.hdf5";
  test::write_d4rl_fixture(file, spec);
  const auto ds = data::load_dataset(file);
  ASSERT_EQ(ds.env_id, "antmaze-umaze-v2");
  viz::DatasetView view;
  view.setDataset(std::make_shared<data::Dataset>(ds));
  // The fixture's rewards are all at least 1: every complete episode counts as reaching it.
  EXPECT_EQ(value_of(view, "Episodes reaching the goal"), "3 of 3 (100.0%)");
  EXPECT_TRUE(value_of(view, "Normalised mean (D4RL)").isEmpty());
  EXPECT_TRUE(view.notesLine()->text().contains("AntMaze"))
      << view.notesLine()->text().toStdString();
}

}  // namespace
}  // namespace dstudio::studio
