// Help ▸ Lessons: the shipped lessons are whole (every file they name is shipped, every tab they
// ask for exists, every lab setting is in range), and a step opens what it says: its checkpoint,
// its comparison, its tab, its lab run, with its text on screen.

#include "lessons.h"

#include <gtest/gtest.h>

#include <QApplication>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTest>
#include <algorithm>

#include "analyses_panel.h"
#include "dstudio/analysis/markov_chain.h"
#include "dstudio/common/palette.h"
#include "dstudio/common/workspace.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/models/markov_lab_options.h"
#include "dstudio/models/playback.h"
#include "dstudio/viz/analysis_view.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/markov_lab_view.h"
#include "dstudio/viz/scene_view.h"
#include "dstudio/viz/step_marks.h"
#include "lesson_panel.h"
#include "main_window.h"
#include "markov_lab_job.h"
#include "test_application.h"
#include "viewer_panel.h"

namespace dstudio::studio {
namespace {

class Lessons : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }
  void SetUp() override { QSettings().clear(); }
};

// A colour a lesson names in parentheses ("the return-to-go (blue)") is the colour the viewers draw
// that trace in; a ghost named by its colour ("the green ghost") is drawn in that colour, the
// first ghost named being the step's first fork; the limb colours are named as effect_colour runs;
// and no other colour is named, in a step's text or in its bookmarks' notes.
TEST_F(Lessons, TheColoursALessonNamesAreTheColoursOnScreen) {
  const auto lessons = shippedLessons();
  const QString colour_words = QStringLiteral(
      "red|orange|yellow|green|blue|purple|pink|grey|gray|black|white|brown|vermill?ion|violet|"
      "cyan|magenta|teal");
  const QRegularExpression named(QStringLiteral(
      R"(([\w\- ,]+?) \((dashed )?(blue|orange|green|red|vermillion|purple|pink|yellow|grey|gray|black|sky blue)\))"));
  const QRegularExpression ghost(
      QStringLiteral(R"(\b((?:light |sky |dark )?(?:%1)) ghost)").arg(colour_words),
      QRegularExpression::CaseInsensitiveOption);
  const QRegularExpression any(QStringLiteral(R"(\b(%1)\b)").arg(colour_words),
                               QRegularExpression::CaseInsensitiveOption);
  // The limb colours as the lessons describe them: grey for none, orange half way, dark red full.
  const QString limbs = QStringLiteral("grey for nothing, through orange, to dark red");
  const auto none = palette::effect_colour(0.0), half = palette::effect_colour(0.5),
             full = palette::effect_colour(1.0);
  ASSERT_TRUE(none.r == none.g && none.g == none.b) << "no change is grey";
  ASSERT_EQ(half, palette::kOrange);
  ASSERT_TRUE(full.r > 2 * full.g && full.r > 2 * full.b && full.r < 200) << "a dark red";
  int traces = 0, ghosts = 0;
  for (const auto& lesson : lessons)
    for (const auto& step : lesson.steps) {
      QString text = QString(step.text).remove(QRegularExpression(QStringLiteral("<[^>]*>")));
      for (const auto& b : step.workspace.value("bookmarks").toArray())
        text += QLatin1Char(' ') + b.toObject()["note"].toString();
      const auto where = (lesson.file + ": " + step.title).toStdString();
      QString rest = text;  // what no check below accounts for
      for (auto it = named.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        const QString what = m.captured(1).trimmed();
        const auto* trace = std::find_if(
            palette::kEpisodeTraces.begin(), palette::kEpisodeTraces.end(), [&](const auto& t) {
              return what.endsWith(
                  QString::fromUtf8(t.name.data(), static_cast<int>(t.name.size())));
            });
        ASSERT_NE(trace, palette::kEpisodeTraces.end())
            << where << ": " << m.captured(0).toStdString()
            << ": names the colour of no trace the viewers draw";
        EXPECT_EQ(m.captured(3).toStdString(), std::string(trace->colour_word)) << where;
        EXPECT_EQ(!m.captured(2).isEmpty(), trace->dashed) << where;
        rest.replace(m.captured(0), QString());
        ++traces;
      }
      // Ghosts in the order of the step's forks.
      const QJsonArray forks = step.workspace.value("viewer").toObject().value("forks").toArray();
      QStringList order;
      for (auto it = ghost.globalMatch(text); it.hasNext();) {
        const QString word = it.next().captured(1).toLower();
        if (!order.contains(word)) order << word;
      }
      ASSERT_LE(order.size(), forks.size()) << where << ": names more ghosts than the step forks";
      for (int i = 0; i < order.size(); ++i) {
        const auto& style = palette::kBranches[static_cast<std::size_t>(i)];
        EXPECT_EQ(order[i].toStdString(), std::string(style.colour_word))
            << where << ": fork " << i + 1 << " is drawn in the colour called "
            << style.colour_word;
        ++ghosts;
      }
      rest.remove(ghost);
      rest.remove(limbs);
      const auto left = any.match(rest);
      EXPECT_FALSE(left.hasMatch())
          << where << ": names the colour \"" << left.captured(1).toStdString()
          << "\" of nothing the viewers draw in it";
    }
  EXPECT_GE(traces, 2)
      << "the return-conditioning lesson names the return-to-go and the return so far";
  EXPECT_GE(ghosts, 3) << "the lessons with forks name their ghosts";
}

TEST_F(Lessons, EveryShippedLessonNamesShippedFilesRealTabsAndSettingsInRange) {
  QStringList problems;
  const auto lessons = shippedLessons(&problems);
  EXPECT_TRUE(problems.isEmpty()) << problems.join("; ").toStdString();
  ASSERT_GE(lessons.size(), 4);
  MainWindow w;
  QStringList tabs;  // by their ids, as workspaces name them
  for (int i = 0; i < w.tabs()->count(); ++i) tabs << w.tabs()->tabBar()->tabData(i).toString();
  for (const auto& lesson : lessons) {
    EXPECT_FALSE(lesson.summary.isEmpty()) << lesson.file.toStdString();
    for (const auto& step : lesson.steps) {
      const auto where = (lesson.file + ": " + step.title).toStdString();
      // Read as the window reads it: core's typed workspace, "@resources/" resolved.
      const Workspace ws =
          resolve_resources(parse_workspace(QJsonDocument(step.workspace).toJson().toStdString()),
                            DSTUDIO_RESOURCES_DIR);
      for (const std::string& file : {ws.checkpoint, ws.compare}) {
        if (!file.empty()) {
          EXPECT_TRUE(QFileInfo(QString::fromStdString(file)).isFile()) << where << ": " << file;
        }
      }
      EXPECT_TRUE(tabs.contains(QString::fromStdString(ws.tab))) << where << ": tab " << ws.tab;
      EXPECT_TRUE(ws.dataset.empty() || ws.dataset == "default") << where;
      if (ws.markov_lab) {
        EXPECT_NO_THROW((void)ws.markov_lab->apply(models::MarkovLabOptions{})) << where;
      }
      // Interventions and forks fit the step's model (the viewer would refuse them).
      if (ws.viewer && !ws.checkpoint.empty()) {
        const auto config = models::read_checkpoint_info(ws.checkpoint).variant;
        EXPECT_NO_THROW(
            models::EpisodePlayer::check_interventions(ws.viewer->interventions, config))
            << where;
        for (const auto& spec : ws.viewer->forks) {
          const auto fork = models::parse_fork(spec);
          auto specs = fork.change.clear_interventions ? std::vector<std::string>{}
                                                       : ws.viewer->interventions;
          specs.insert(specs.end(), fork.change.interventions.begin(),
                       fork.change.interventions.end());
          EXPECT_NO_THROW(models::EpisodePlayer::check_interventions(specs, config))
              << where << ": " << spec;
          // A checkpoint in a fork is not resolved from "@resources/" as the step's are.
          EXPECT_TRUE(fork.change.checkpoint.empty()) << where << ": " << spec;
        }
      }
    }
  }
}

TEST_F(Lessons, ABrokenLessonIsRefusedWithItsFileAndWhy) {
  try {
    parseLesson(
        "{\"decision_studio_lesson\": 1, \"title\": \"t\", \"steps\": [{\"title\": \"a\"}]}",
        "broken.json");
    FAIL() << "a step without text or workspace was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json: step 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parseLesson("{\"title\": \"t\"", "cut.json"), std::runtime_error);
  EXPECT_THROW(parseLesson("{\"decision_studio_workspace\": 1}", "workspace.json"),
               std::runtime_error);
}

TEST_F(Lessons, AStepOpensItsCheckpointItsComparisonSideBySideAndItsText) {
  MainWindow w;
  w.resize(1280, 800);
  w.show();
  QSignalSpy compared(&w, &MainWindow::comparisonShown);
  QSignalSpy failed(&w, &MainWindow::checkpointFailed);
  w.openLesson(0, 1);  // attention disperses: DT and GDT side by side
  ASSERT_TRUE(compared.wait(180000))
      << (failed.isEmpty() ? "timed out" : failed.front().front().toString().toStdString());
  EXPECT_TRUE(compared.front().front().toString().endsWith("hopper-medium-expert-gdt.pt"));
  EXPECT_TRUE(w.attentionView()->showingSideBySide());
  EXPECT_EQ(w.currentPage(), w.attentionView());
  EXPECT_TRUE(w.lessonPanel()->isVisible());
  EXPECT_TRUE(w.lessonPanel()->text().contains("2 of 3")) << w.lessonPanel()->text().toStdString();
  EXPECT_TRUE(w.lessonPanel()->text().contains("Gaussian"))
      << w.lessonPanel()->text().toStdString();

  // Next: DC alone, the comparison gone.
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.lessonPanel()->next();
  ASSERT_TRUE(shown.wait(180000));
  EXPECT_TRUE(shown.front().front().toString().endsWith("hopper-medium-expert-dc.pt"));
  EXPECT_FALSE(w.attentionView()->showingSideBySide());
  EXPECT_EQ(w.lessonPanel()->step(), 2);

  // With a result in the Analyses tab, a step that opens another checkpoint asks first: Cancel
  // keeps the checkpoint and the result; Open the Lesson opens the step's.
  auto* panel = w.analysesPanel();
  QSignalSpy analysed(panel, &AnalysesPanel::resultShown);
  ASSERT_TRUE(panel->view("attention")->setOption("windows", "2"));
  ASSERT_TRUE(panel->run("attention"));
  ASSERT_TRUE(analysed.wait(120000));
  const auto answer = [&](const QString& button) {
    QMessageBox* box = nullptr;
    EXPECT_TRUE(test::wait_until(
        [&] { return (box = w.findChild<QMessageBox*>("lessonReplacesDialog")) != nullptr; },
        10000));
    if (!box) return;
    EXPECT_TRUE(box->informativeText().contains("The Analyses tab's results (attention)"))
        << box->informativeText().toStdString();
    for (auto* b : box->buttons())
      if (b->text().remove('&') == button) b->click();
  };
  w.lessonPanel()->previous();
  answer("Cancel");
  EXPECT_TRUE(w.checkpointPath().endsWith("hopper-medium-expert-dc.pt"))
      << w.checkpointPath().toStdString();
  EXPECT_TRUE(panel->view("attention")->hasResult());
  shown.clear();
  w.lessonPanel()->previous();
  answer("Open the Lesson");
  ASSERT_TRUE(shown.wait(180000));
  EXPECT_TRUE(shown.front().front().toString().endsWith("hopper-medium-expert-dt.pt"));
}

// A lesson's bookmarks: listed under the step's text as links, on the viewer's timeline as marks;
// a click on one takes the viewer to its step.
TEST_F(Lessons, AStepsBookmarksAreListedDrawnAndTakeTheViewerThere) {
  const auto lessons = shippedLessons();
  int which = -1;
  for (int i = 0; i < lessons.size(); ++i)
    if (lessons[i].file == "which-head-reads-the-return.json") which = i;
  ASSERT_GE(which, 0);
  MainWindow w;
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openLesson(which, 0);
  EXPECT_TRUE(w.lessonPanel()->text().contains("step 283 · the ghost falls"))
      << w.lessonPanel()->text().toStdString();
  ASSERT_EQ(w.viewer()->bookmarks().size(), 2u);
  EXPECT_EQ(w.viewer()->bookmarks()[1].step, 283);
  EXPECT_EQ(viz::step_mark_count(w.viewer()->timeline()->plot()), 2);
  ASSERT_TRUE(shown.wait(180000));
  // A bookmark's link takes the viewer to its step, played there when it has not been yet.
  emit w.lessonPanel()->bookmarkChosen(120);
  EXPECT_EQ(w.currentPage(), static_cast<QWidget*>(w.viewer()));
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        w.viewer()->sync();
        return w.viewer()->shown().cursor == 120;
      },
      120000));
  w.lessonPanel()->next();
  EXPECT_EQ(w.viewer()->bookmarks()[1].step, 353) << "the next step's bookmarks replace them";
  EXPECT_EQ(w.workspace().bookmarks, w.viewer()->bookmarks());
}

// At 1280 x 800 the lesson panel beside the tabs keeps the window on the screen, and every tab in
// view (the tab bar's type gives a little first); in large type too, the window stays on screen.
TEST_F(Lessons, ThePanelBesideTheTabsKeepsTheWindowOnAScreenOf1280) {
  MainWindow w;
  w.resize(1280, 800);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  w.lessonPanel()->show();
  QApplication::processEvents();
  w.resize(1280, 800);
  QApplication::processEvents();
  EXPECT_LE(w.minimumSizeHint().width(), 1280);
  EXPECT_EQ(w.width(), 1280);
  EXPECT_GT(w.lessonPanel()->width(), 200);
  EXPECT_LE(w.tabs()->tabBar()->sizeHint().width(), w.tabs()->width()) << "every tab in view";
  EXPECT_GE(w.tabs()->tabBar()->font().pointSizeF(),
            MainWindow::kSmallestTabType * QApplication::font().pointSizeF() - 1e-6);
  w.setPresentationMode(true);
  QApplication::processEvents();
  w.resize(1280, 800);
  QApplication::processEvents();
  EXPECT_LE(w.minimumSizeHint().width(), 1280);
  EXPECT_LE(w.minimumSizeHint().height(), 800);
  EXPECT_EQ(w.size(), QSize(1280, 800));
  w.setPresentationMode(false);
}

// The lesson about a ghost, on the Viewer tab of a 1280 x 800 window: the window and its status
// bar (where exports say where they went) stay on the screen under a title bar, the scene keeps a
// fair share of the height, and the tab does not scroll sideways; in large type too, where the
// lesson beside it leaves the tab too little width for its two columns, and without the lesson
// the tab fits again, the map whole.
TEST_F(Lessons, TheViewerBesideALessonFitsAScreenOf1280InLargeTypeToo) {
  const auto lessons = shippedLessons();
  int which = -1;
  for (int i = 0; i < lessons.size(); ++i)
    if (lessons[i].file == "which-head-reads-the-return.json") which = i;
  ASSERT_GE(which, 0);
  MainWindow w;
  w.resize(1280, 800);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openLesson(which, 0);
  ASSERT_TRUE(shown.wait(180000));
  ASSERT_EQ(w.currentPage(), static_cast<QWidget*>(w.viewer()));
  const auto check = [&](const char* type, bool sideways_too) {
    QApplication::processEvents();
    w.resize(1280, 760);
    QApplication::processEvents();
    EXPECT_LE(w.minimumSizeHint().width(), 1280) << type;
    // Under a title bar: the window's least height leaves it room.
    EXPECT_LE(w.minimumSizeHint().height(), 760)
        << type << ": menu bar " << w.menuBar()->minimumSizeHint().height() << ", tabs "
        << w.tabs()->minimumSizeHint().height() << ", lesson "
        << w.lessonPanel()->minimumSizeHint().height() << ", status bar "
        << w.statusBar()->minimumSizeHint().height();
    EXPECT_EQ(w.size(), QSize(1280, 760)) << type;
    const QRect status = w.statusBar()->geometry();
    EXPECT_TRUE(w.rect().contains(status))
        << type << ": the status bar at y " << status.y() << " to " << status.bottom();
    auto* area = qobject_cast<QScrollArea*>(w.tabs()->currentWidget());
    ASSERT_NE(area, nullptr);
    if (sideways_too) {
      EXPECT_LE(w.viewer()->minimumSizeHint().width(), area->viewport()->width())
          << type << ": the Viewer tab scrolls sideways";
    }
    EXPECT_GE(w.viewer()->scene()->height(), 760 / 4) << type << ": the scene is a strip";
  };
  check("normal type, beside the lesson", true);
  w.setPresentationMode(true);
  check("large type, beside the lesson", false);
  w.lessonPanel()->hide();
  check("large type", true);
  EXPECT_FALSE(w.viewer()->attention()->controlsShown()) << "the map alone beside the scene";
  w.setPresentationMode(false);
  EXPECT_TRUE(w.viewer()->attention()->controlsShown());
}

TEST_F(Lessons, TheMarkovLessonSetsTheLabAndTrainsIt) {
  MainWindow w;
  w.openLesson(1, 1);  // order 2, a window of 1
  const auto o = w.markovLab()->options();
  EXPECT_EQ(o.chain.order, 2);
  EXPECT_EQ(o.window, 1);
  EXPECT_EQ(o.mixer, models::LabMixer::Pooling);
  EXPECT_EQ(w.currentPage(), w.markovLab());
  EXPECT_TRUE(w.markovLabJob()->isRunning());
  QSignalSpy finished(w.markovLabJob(), &MarkovLabJob::finished);
  w.markovLabJob()->cancel();
  EXPECT_TRUE(finished.count() > 0 || finished.wait(10000));
}

}  // namespace
}  // namespace dstudio::studio
