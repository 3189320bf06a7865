// The window given bad files of every kind, as on the command line or from the File menu (both
// end in MainWindow::openAny): each shows a message naming the file, and the window stays as it
// was and usable. And `decision-studio --help`, `--version` and a wrong option need no display.

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <QDir>
#include <QLabel>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "default_dataset.h"
#include "dstudio/plugins/loader.h"
#include "dstudio/viz/dataset_view.h"
#include "h5_fixture.h"
#include "main_window.h"
#include "test_application.h"

namespace dstudio::studio {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class BadInput : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }
  void SetUp() override {
    QSettings().clear();
    test::D4rlSpec spec;
    spec.n = 12;
    spec.terminals = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    good = dir / "good.hdf5";
    test::write_d4rl_fixture(good, spec);
  }

  // Waits for the dialog of `name`, checks it names `file`, closes it.
  static void expect_dialog(MainWindow& w, const char* name, const std::string& file,
                            const QString& screenshot = {}) {
    QMessageBox* dialog = nullptr;
    for (int i = 0; i < 300 && !dialog; ++i) {
      QTest::qWait(50);
      dialog = w.findChild<QMessageBox*>(name);
    }
    ASSERT_NE(dialog, nullptr) << name << " for " << file;
    EXPECT_TRUE(dialog->isVisible());
    EXPECT_TRUE(dialog->informativeText().contains(QString::fromStdString(file)))
        << dialog->informativeText().toStdString();
    if (!screenshot.isEmpty()) {
      QDir().mkpath(DSTUDIO_SCREENSHOT_DIR);
      dialog->grab().save(QDir(DSTUDIO_SCREENSHOT_DIR).filePath(screenshot));
    }
    dialog->accept();
    // Deleted on close: gone before the next dialog of the same name is looked for.
    ASSERT_TRUE(
        test::wait_until([&] { return w.findChild<QMessageBox*>(name) == nullptr; }, 10000));
  }

  test::TempDir dir;
  fs::path good;
};

TEST_F(BadInput, EveryKindOfBadFileShowsAMessageAndTheWindowStaysUsable) {
  MainWindow w;
  w.show();
  {
    QSignalSpy opened(&w, &MainWindow::datasetOpened);
    w.openAny(QString::fromStdString(good.string()));
    ASSERT_TRUE(opened.wait(10000));
  }
  const int episodes = w.datasetView()->episodeTable()->model()->rowCount();
  ASSERT_GT(episodes, 0);
  // Datasets: not HDF5, cut short, missing.
  const auto junk = dir / "junk.hdf5", cut = dir / "cut.hdf5", missing = dir / "missing.hdf5";
  write_all(junk, "not an HDF5 file");
  const std::string bytes = read_all(good);
  write_all(cut, bytes.substr(0, bytes.size() / 2));
  for (const auto& bad : {junk, cut, missing}) {
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openAny(QString::fromStdString(bad.string()));
    ASSERT_TRUE(failed.wait(10000)) << bad;
    expect_dialog(w, "datasetErrorDialog", bad.string());
    EXPECT_EQ(w.currentPath().toStdString(), good.string());
  }
  // Checkpoints: not a checkpoint, a shipped one with one bit flipped, one cut short.
  const std::string shipped = read_all(defaultCheckpoint().toStdString());
  ASSERT_GT(shipped.size(), 1000u);
  const auto text = dir / "text.pt", flipped = dir / "flipped.pt", short_one = dir / "short.pt";
  write_all(text, "not a checkpoint");
  std::string damaged = shipped;
  damaged[damaged.size() / 3] = static_cast<char>(damaged[damaged.size() / 3] ^ 0x10);
  write_all(flipped, damaged);
  write_all(short_one, shipped.substr(0, shipped.size() - 100));
  const auto fifo_checkpoint = dir / "fifo.pt";  // would block a reader forever
  ASSERT_EQ(::mkfifo(fifo_checkpoint.c_str(), 0600), 0);
  for (const auto& bad : {text, flipped, short_one, fifo_checkpoint}) {
    QSignalSpy failed(&w, &MainWindow::checkpointFailed);
    w.openAny(QString::fromStdString(bad.string()));
    ASSERT_TRUE(failed.wait(30000)) << bad;
    EXPECT_TRUE(failed.front().front().toString().contains(QString::fromStdString(bad.string())));
    expect_dialog(w, "checkpointErrorDialog", bad.string(),
                  bad == flipped ? QStringLiteral("damaged-checkpoint-dialog.png") : QString());
  }
  // Workspaces: not JSON, JSON of another program, a value of the wrong type.
  const auto not_json = dir / "broken.json", foreign = dir / "foreign.json",
             wrong = dir / "wrong.json";
  write_all(not_json, "{\"decision_studio_workspace\": 1,");
  write_all(foreign, "{\"name\": \"package.json\"}");
  write_all(wrong, "{\"decision_studio_workspace\": 1, \"viewer\": {\"target\": \"high\"}}");
  // And one holding a 64 MiB string (it froze the window), one with a path longer than any, a FIFO.
  const auto huge = dir / "huge.dstudio", long_path = dir / "long.dstudio",
             fifo = dir / "fifo.dstudio";
  write_all(huge, "{\"decision_studio_workspace\": 1, \"dataset\": \"" +
                      std::string(64u << 20, 'a') + "\"}");
  write_all(long_path,
            "{\"decision_studio_workspace\": 1, \"dataset\": \"/" + std::string(5000, 'a') + "\"}");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& bad : {not_json, foreign, wrong, huge, long_path, fifo}) {
    QSignalSpy failed(&w, &MainWindow::workspaceFailed);
    w.openAny(QString::fromStdString(bad.string()));
    ASSERT_EQ(failed.count(), 1) << bad;
    EXPECT_FALSE(failed.front().at(1).toBool());
    expect_dialog(w, "workspaceErrorDialog", bad.string(),
                  bad == wrong ? QStringLiteral("workspace-error-dialog.png") : QString());
  }
  QString why;
  EXPECT_FALSE(w.loadWorkspace(QString::fromStdString(huge.string()), &why));
  EXPECT_TRUE(why.contains("more than the 4 MiB")) << why.toStdString();
  EXPECT_FALSE(w.loadWorkspace(QString::fromStdString(long_path.string()), &why));
  EXPECT_TRUE(why.contains("at most 4096")) << why.toStdString();
  // Still the same dataset, and the window still opens what it is given.
  EXPECT_EQ(w.currentPath().toStdString(), good.string());
  EXPECT_EQ(w.datasetView()->episodeTable()->model()->rowCount(), episodes);
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openAny(defaultCheckpoint());
  EXPECT_TRUE(shown.wait(60000));
}

// A plugin's dataset format that crashes on a file: the window reads the file in the plugin reader
// process, says which format crashed, keeps the dataset it showed and opens the next one.
TEST_F(BadInput, APluginFormatThatCrashesIsRefusedAndTheWindowStaysUsable) {
  const auto plugin = plugins::load_plugin(DSTUDIO_CRASHING_FORMAT_PLUGIN);
  ASSERT_TRUE(plugin.loaded) << plugin.error;
  MainWindow w;
  w.show();
  {
    QSignalSpy opened(&w, &MainWindow::datasetOpened);
    w.openAny(QString::fromStdString(good.string()));
    ASSERT_TRUE(opened.wait(10000));
  }
  const auto bad = dir / "episodes.crashes";
  write_all(bad, "anything");
  QSignalSpy failed(&w, &MainWindow::loadFailed);
  w.openAny(QString::fromStdString(bad.string()));
  ASSERT_TRUE(failed.wait(60000));
  const QString message = failed.front().front().toString();
  EXPECT_TRUE(message.contains(QString::fromStdString(bad.string()))) << message.toStdString();
  EXPECT_TRUE(
      message.contains("the crashing-format format (plugin test-crashing-format 0.1.0) crashed"))
      << message.toStdString();
  expect_dialog(w, "datasetErrorDialog", bad.string());
  EXPECT_EQ(w.currentPath().toStdString(), good.string());
  QSignalSpy opened(&w, &MainWindow::datasetOpened);
  w.openAny(QString::fromStdString(good.string()));
  EXPECT_TRUE(opened.wait(10000));
}

// Damaged datasets that make libhdf5 crash, loop forever or read zeros: the window reads datasets
// in the reader process (dstudio-probe), shows what failed naming the file, and stays usable. The
// command line and File ▸ Open both end in openAny, as here.
TEST_F(BadInput, DamagedDatasetsThatCrashOrHangTheLibraryShowAMessageAndTheWindowStaysUsable) {
  const fs::path damaged = fs::path(DSTUDIO_TEST_DATA) / "damaged";
  MainWindow w;
  w.show();
  {
    QSignalSpy opened(&w, &MainWindow::datasetOpened);
    w.openAny(QString::fromStdString(good.string()));
    ASSERT_TRUE(opened.wait(10000));
  }
  const std::pair<const char*, const char*> refused[] = {
      {"crash_top_level_links.hdf5", "the HDF5 library crashed"},
      {"zero_rewards.hdf5", "fill value"}};
  for (const auto& [name, cause] : refused) {
    const auto file = (damaged / name).string();
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openAny(QString::fromStdString(file));
    ASSERT_TRUE(failed.wait(20000)) << name;
    EXPECT_TRUE(failed.front().front().toString().contains(QString::fromUtf8(cause)))
        << failed.front().front().toString().toStdString();
    expect_dialog(w, "datasetErrorDialog", file,
                  name == std::string("zero_rewards.hdf5")
                      ? QString()
                      : QStringLiteral("crashing-dataset-dialog.png"));
    EXPECT_EQ(w.currentPath().toStdString(), good.string());
  }
  // A loop in the metadata: stopped at the time limit, the dataset shown with a warning.
  setenv("DSTUDIO_READER_TIMEOUT", "4", 1);  // room for a loaded machine; the loop costs this much
  {
    QSignalSpy opened(&w, &MainWindow::datasetOpened);
    w.openAny(QString::fromStdString((damaged / "hang_in_metadata.hdf5").string()));
    const bool ok = opened.wait(30000);
    unsetenv("DSTUDIO_READER_TIMEOUT");
    ASSERT_TRUE(ok);
  }
  auto* warnings = w.datasetView()->findChild<QLabel*>("datasetWarnings");
  ASSERT_NE(warnings, nullptr);
  EXPECT_TRUE(warnings->text().contains("did not finish reading 'metadata/algorithm'"))
      << warnings->text().toStdString();
  // And a good dataset opens afterwards.
  QSignalSpy opened(&w, &MainWindow::datasetOpened);
  w.openAny(QString::fromStdString(good.string()));
  ASSERT_TRUE(opened.wait(10000));
  EXPECT_EQ(w.currentPath().toStdString(), good.string());
  EXPECT_GT(w.datasetView()->episodeTable()->model()->rowCount(), 0);
}

// decision-studio `args` as typed in a terminal whose environment `env` changes (by default: no
// display and no platform chosen, what a terminal without X has); its exit code, `out` what it
// printed.
int run_studio(const std::string& args, std::string& out,
               const std::string& env = "-u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM") {
  const std::string cmd = "env " + env + " " + std::string(DSTUDIO_STUDIO) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  char buffer[4096];
  out.clear();
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Headless, a workspace that cannot open ends the program with its message and no picture: it
// once waited forever for a dataset that never came.
TEST(StudioCommandLine, AScreenshotOfAWorkspaceThatCannotOpenExitsWithTheMessage) {
  test::TempDir dir;
  const auto deep = std::string(100000, '[');
  const std::vector<std::pair<std::string, std::string>> workspaces = {
      {"truncated.dstudio", "{\"decision_studio_workspace\": 1, \"data"},
      {"nested.dstudio", "{\"decision_studio_workspace\": 1, \"x\": " + deep + "}"},
      {"junk.dstudio", std::string("\x89PNG\r\n\x1a\n\0\0\xff\xfe", 12)},
      {"newer.dstudio", "{\"decision_studio_workspace\": 1e20}"},
      {"missing.dstudio",
       "{\"decision_studio_workspace\": 1, \"dataset\": \"" + (dir / "gone.hdf5").string() + "\"}"},
      {"huge.dstudio",
       "{\"decision_studio_workspace\": 1, \"dataset\": \"" + std::string(64u << 20, 'a') + "\"}"},
  };
  for (const auto& [name, text] : workspaces) {
    write_all(dir / name, text);
    const auto shot = dir / (name + ".png");
    std::string out;
    EXPECT_EQ(run_studio((dir / name).string() + " --screenshot " + shot.string(), out,
                         "QT_QPA_PLATFORM=offscreen"),
              1)
        << name << ": " << out;
    EXPECT_NE(out.find("decision-studio: error: " + (dir / name).string()), std::string::npos)
        << name << ": " << out;
    EXPECT_FALSE(fs::exists(shot)) << name;
  }
  // The 64 MiB workspace is refused by its size, before it is read: no run grew past a gigabyte
  // (it took 2.7 GB before). Each test runs in its own process, so these are its children alone.
  rusage usage{};
  ASSERT_EQ(::getrusage(RUSAGE_CHILDREN, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 1024L * 1024L) << "kilobytes";
}

TEST(StudioCommandLine, HelpVersionAndWrongOptionsNeedNoDisplay) {
  std::string out;
  EXPECT_EQ(run_studio("--help", out), 0) << out;
  EXPECT_NE(out.find("--screenshot"), std::string::npos) << out;
  EXPECT_EQ(run_studio("--version", out), 0) << out;
  EXPECT_NE(out.find(DSTUDIO_VERSION_TEXT), std::string::npos) << out;
  EXPECT_EQ(run_studio("--no-such-option", out), 2) << out;
  EXPECT_NE(out.find("no-such-option"), std::string::npos) << out;
  // The benchmarks' numbers are checked before a window is asked for.
  for (const char* bad : {"--bench-tsne 12", "--bench-tsne lots", "--bench-tsne 1e9",
                          "--bench-gui -3", "--bench-gui x"}) {
    EXPECT_EQ(run_studio(bad, out), 2) << bad << ": " << out;
    EXPECT_NE(out.find(std::string(bad).substr(2, 10)), std::string::npos) << bad << ": " << out;
  }
}

}  // namespace
}  // namespace dstudio::studio
