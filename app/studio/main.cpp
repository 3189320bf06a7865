// decision-studio: the Qt GUI.

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QIcon>
#include <QSettings>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "clip_render.h"
#include "dstudio/common/exit_code.h"
#include "dstudio/common/resources.h"
#include "dstudio/common/system_info.h"
#include "dstudio/plugins/loader.h"
#include "dstudio/viz/dataset_view.h"
#include "gui_benchmark.h"
#include "main_window.h"
#include "screenshot_tour.h"
#include "sweep_panel.h"
#include "tsne_benchmark.h"

namespace {

// The command line, read twice: once before any window system is asked for (so --help, --version
// and a wrong option need no display), once by the application.
struct StudioOptions {
  QCommandLineOption screenshot{
      "screenshot", "Open the dataset, save a PNG of the window to <file> and exit.", "file"};
  QCommandLineOption screenshot_all{"screenshot-all",
                                    "Open the default dataset and checkpoint, fill every view, "
                                    "save one PNG per view into <dir> and exit. An AntMaze "
                                    "dataset given as a file is the maze view's (its first "
                                    "episode replayed).",
                                    "dir"};
  QCommandLineOption sweep{
      "sweep",
      "Open the sweep folder <dir> (dstudio sweep create; docs/sweeps.md) in the Sweep tab; "
      "without files, no "
      "dataset is opened. With --screenshot, the window is saved once the sweep is read.",
      "dir"};
  QCommandLineOption presentation{
      "presentation", "Start in presentation mode (large type, for a projector; F11 toggles it)."};
  QCommandLineOption no_plugins{"no-plugins", "Load no plugin (also DSTUDIO_NO_PLUGINS=1)."};
  QCommandLineOption bench_gui{
      "bench-gui",
      "Measure how long the GUI thread stalls and how fast the viewer draws while a training run, "
      "a rollout "
      "and the viewer run at once, for <seconds>; print the numbers and exit. Files given (a "
      "dataset and a checkpoint) are measured instead of the defaults; a dataset alone replays its "
      "first episode in the viewer.",
      "seconds"};
  QCommandLineOption bench_tsne{"bench-tsne",
                                "Lay out <tokens> tokens of the shipped DHi checkpoint in the "
                                "t-SNE view and measure how long the GUI "
                                "thread stalls meanwhile; print the numbers and exit (with "
                                "--screenshot, also save the window).",
                                "tokens"};

  QCommandLineOption render_clip{
      "render-clip",
      "Draw a Viewer tab recording again from its <recipe> (<clip>.recipe.json, written beside "
      "it) into --out FILE.mp4, with its clip log beside it, and exit ('dstudio figure render' "
      "runs this for a clip). Needs a display (or xvfb-run) and ffmpeg.",
      "recipe"};
  QCommandLineOption out{"out", "The file --render-clip writes (.mp4).", "file"};
  QCommandLineOption root{"root",
                          "With --render-clip: a folder the recipe's inputs moved to, as 'dstudio "
                          "figure render --root' takes it (repeatable).",
                          "dir"};

  explicit StudioOptions(QCommandLineParser& parser) {
    parser.setApplicationDescription(
        "Decision Studio: inspect offline-RL datasets and sequence models.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("files",
                                 "D4RL .hdf5 files or Minari datasets, checkpoints (.pt) or a "
                                 "workspace (.dstudio, .json) to open "
                                 "(default: the embedded dataset).",
                                 "[files...]");
    parser.addOption(screenshot);
    parser.addOption(screenshot_all);
    parser.addOption(sweep);
    parser.addOption(presentation);
    parser.addOption(no_plugins);
    parser.addOption(bench_gui);
    parser.addOption(bench_tsne);
    parser.addOption(render_clip);
    parser.addOption(out);
    parser.addOption(root);
  }
};

void name_application() {
  // Settings in $XDG_CONFIG_HOME/decision-studio/decision-studio.conf.
  QCoreApplication::setOrganizationName("decision-studio");
  QCoreApplication::setApplicationName("decision-studio");
  QCoreApplication::setApplicationVersion(DSTUDIO_VERSION);
}

// What the command line asks before any window system is: --help and --version answered, a wrong
// option or a benchmark's number refused. The exit code when that ends the program.
std::optional<int> answer_before_windows(int& argc, char** argv) {
  QCoreApplication core(argc, argv);
  name_application();
  QCommandLineParser parser;
  const StudioOptions options(parser);
  if (!parser.parse(QCoreApplication::arguments())) {
    std::fprintf(stderr, "decision-studio: error: %s\nRun 'decision-studio --help' for usage.\n",
                 qPrintable(parser.errorText()));
    return dstudio::kExitUsage;
  }
  if (parser.isSet(QStringLiteral("help"))) {
    std::fputs(qPrintable(parser.helpText()), stdout);
    return 0;
  }
  if (parser.isSet(QStringLiteral("version"))) {
    std::printf("decision-studio (Decision Studio) %s\n", DSTUDIO_VERSION);
    return 0;
  }
  // The benchmarks' numbers are checked before any window opens.
  if (parser.isSet(options.bench_gui)) {
    bool ok = false;
    const double seconds = parser.value(options.bench_gui).toDouble(&ok);
    if (!ok || !(seconds > 0 && seconds <= 3600)) {
      std::fprintf(stderr,
                   "decision-studio: error: --bench-gui takes seconds in (0, 3600], not \"%s\"\n",
                   qPrintable(parser.value(options.bench_gui)));
      return dstudio::kExitUsage;
    }
  }
  if (parser.isSet(options.render_clip) != parser.isSet(options.out)) {
    std::fputs("decision-studio: error: --render-clip RECIPE and --out FILE.mp4 go together\n",
               stderr);
    return dstudio::kExitUsage;
  }
  if (parser.isSet(options.bench_tsne)) {
    bool ok = false;
    const int tokens = parser.value(options.bench_tsne).toInt(&ok);
    if (!ok || tokens < 100 || tokens > 10'000'000) {
      std::fprintf(stderr,
                   "decision-studio: error: --bench-tsne takes a number of tokens in [100, "
                   "10000000], not \"%s\"\n",
                   qPrintable(parser.value(options.bench_tsne)));
      return dstudio::kExitUsage;
    }
  }
  return std::nullopt;
}

// The name the windows show, and the desktop entry and icon the package installs; a build tree
// holds the icon at the same place.
void identify_windows() {
  QApplication::setApplicationDisplayName("Decision Studio");
  QGuiApplication::setDesktopFileName(QStringLiteral("org.decisionstudio.DecisionStudio"));
  const auto exe = dstudio::executable_path();
  const QString icon_file = QString::fromStdString(
      (exe.parent_path().parent_path() / "share/icons/hicolor/scalable/apps/decision-studio.svg")
          .string());
  QApplication::setWindowIcon(
      QIcon::fromTheme(QStringLiteral("decision-studio"), QIcon(icon_file)));
}

// --render-clip: draws the clip again from its recipe into --out, then says where (or why not).
int render_clip(const QCommandLineParser& parser, const StudioOptions& options) {
  dstudio::studio::ClipRender render(parser.value(options.render_clip), parser.value(options.out),
                                     parser.values(options.root));
  int code = 0;
  QObject::connect(
      &render, &dstudio::studio::ClipRender::finished, [&code](bool ok, const QString& message) {
        std::fprintf(ok ? stdout : stderr, ok ? "%s\n" : "decision-studio: error: %s\n",
                     qPrintable(message));
        code = ok ? 0 : 1;
        QApplication::exit(code);
      });
  render.start();
  QApplication::exec();
  return code;
}

// --screenshot with --sweep: the Sweep tab saved to `shot` once its cells are read (and the figure
// and tree laid out), and the program ends.
void save_sweep_screenshot(dstudio::studio::MainWindow& window, const QString& shot) {
  QObject::connect(window.sweepPanel(), &dstudio::studio::SweepPanel::sweepOpened, [&window, shot] {
    QTimer::singleShot(500, [&window, shot] {
      const bool saved = window.grab().save(shot);
      std::fprintf(saved ? stdout : stderr, saved ? "saved %s\n" : "could not save %s\n",
                   qPrintable(shot));
      QApplication::exit(saved ? 0 : 1);
    });
  });
  QObject::connect(window.sweepPanel(), &dstudio::studio::SweepPanel::openFailed,
                   [](const QString& message) {
                     std::fprintf(stderr, "decision-studio: error: %s\n", qPrintable(message));
                     QApplication::exit(1);
                   });
}

// --screenshot (headless use: tests, documentation): the window shown with real content, saved
// to `shot` once the dataset's summary is complete, and the program ends.
void save_dataset_screenshot(dstudio::studio::MainWindow& window, QApplication& app,
                             const QString& shot) {
  auto save = [&window, shot] {
    QTimer::singleShot(300, [&window, shot] {
      const bool saved = window.grab().save(shot);
      std::fprintf(saved ? stdout : stderr, saved ? "saved %s\n" : "could not save %s\n",
                   qPrintable(shot));
      QApplication::exit(saved ? 0 : 1);
    });
  };
  QObject::connect(&window, &dstudio::studio::MainWindow::datasetOpened, [&window, save] {
    auto* view = window.datasetView();
    view->episodeTable()->selectRow(0);
    // Rows computed after the dataset is shown (the R^2) belong in the picture too.
    if (view->summaryComplete())
      save();
    else
      QObject::connect(view, &dstudio::viz::DatasetView::summaryCompleted, view, save,
                       Qt::SingleShotConnection);
  });
  QObject::connect(&window, &dstudio::studio::MainWindow::loadFailed, [](const QString& message) {
    std::fprintf(stderr, "decision-studio: error: %s\n", qPrintable(message));
    QApplication::exit(1);
  });
  // A workspace that cannot open, or opens without its files, gives no picture worth saving.
  // Queued: a workspace is opened before the event loop runs, and exit() only ends a running one.
  QObject::connect(
      &window, &dstudio::studio::MainWindow::workspaceFailed, &app,
      [](const QString& message) {
        std::fprintf(stderr, "decision-studio: error: %s\n", qPrintable(message));
        QApplication::exit(1);
      },
      Qt::QueuedConnection);
}

// --screenshot-all: every view filled and saved into `dir` (with the maze view's dataset among
// `files`, and the sweep `sweep`'s tab), then the program ends.
int take_screenshot_tour(dstudio::studio::MainWindow& window, const QString& dir,
                         const QStringList& files, const QString& sweep) {
  auto* tour = new dstudio::studio::ScreenshotTour(window, dir);
  if (!files.isEmpty()) tour->setMazeDataset(files.front());
  QObject::connect(
      tour, &dstudio::studio::ScreenshotTour::finished, [](bool ok, const QString& message) {
        std::fprintf(ok ? stdout : stderr, ok ? "%s\n" : "decision-studio: error: %s\n",
                     qPrintable(message));
        QApplication::exit(ok ? 0 : 1);
      });
  if (!sweep.isEmpty()) window.openSweep(sweep);  // the tour saves its tab too
  tour->start();
  return QApplication::exec();
}

// --bench-tsne: `tokens` laid out in the t-SNE view, the GUI thread's stalls measured meanwhile.
int bench_tsne(dstudio::studio::MainWindow& window, int tokens, const QString& shot) {
  auto* bench = new dstudio::studio::TsneBenchmark(window, tokens, shot);
  QObject::connect(
      bench, &dstudio::studio::TsneBenchmark::finished, [](bool passed, const QString& report) {
        std::fprintf(passed ? stdout : stderr, passed ? "%s" : "decision-studio: error: %s\n",
                     qPrintable(report));
        QApplication::exit(passed ? 0 : 1);
      });
  bench->start();
  return QApplication::exec();
}

// --bench-gui: the GUI thread's stalls and the viewer's drawing measured for `seconds` while a
// training run, a rollout and the viewer run at once (on `files`, when given).
int bench_gui(dstudio::studio::MainWindow& window, double seconds, const QStringList& files) {
  auto* bench = new dstudio::studio::GuiBenchmark(window, seconds, files);
  QObject::connect(
      bench, &dstudio::studio::GuiBenchmark::finished, [](bool passed, const QString& report) {
        std::fprintf(passed ? stdout : stderr, passed ? "%s" : "decision-studio: error: %s\n",
                     qPrintable(report));
        QApplication::exit(passed ? 0 : 1);
      });
  bench->start();
  return QApplication::exec();
}

}  // namespace

int main(int argc, char** argv) {
  dstudio::keep_freed_memory();
  if (const auto code = answer_before_windows(argc, argv)) return *code;
  // Plugins before the window: their variants and analyses fill its forms. A refused one is named
  // on stderr and in Help ▸ Plugins; the studio carries on without it. Loaded (and first probed in
  // a child process) before the application object exists, while this process has one thread.
  dstudio::plugins::apply_no_plugins_option(argc, argv);
  for (const auto& r : dstudio::plugins::load_default_plugins())
    if (!r.loaded)
      std::fprintf(stderr, "decision-studio: plugin %s refused: %s\n", r.file.c_str(),
                   r.error.c_str());
  QApplication app(argc, argv);
  name_application();
  // Drawing a clip again touches none of the user's settings (the panel remembers its speed,
  // recording area and rate): they go to a folder of its own, removed on exit.
  QTemporaryDir render_settings;
  if (std::any_of(argv, argv + argc, [](const char* a) {
        return std::strcmp(a, "--render-clip") == 0 || std::strncmp(a, "--render-clip=", 14) == 0;
      })) {
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, render_settings.path());
  }
  identify_windows();
  QCommandLineParser parser;
  const StudioOptions options(parser);
  parser.process(app);
  if (parser.isSet(options.render_clip)) return render_clip(parser, options);

  dstudio::studio::MainWindow window;
  if (parser.isSet(options.presentation)) window.setPresentationMode(true);
  const QString shot = parser.value(options.screenshot);
  const QString sweep = parser.value(options.sweep);
  if (!shot.isEmpty() && !sweep.isEmpty())
    save_sweep_screenshot(window, shot);
  else if (!shot.isEmpty() && !parser.isSet(options.bench_tsne))
    save_dataset_screenshot(window, app, shot);
  window.show();
  if (parser.isSet(options.screenshot_all))
    return take_screenshot_tour(window, parser.value(options.screenshot_all),
                                parser.positionalArguments(), sweep);
  if (parser.isSet(options.bench_tsne))
    return bench_tsne(window, parser.value(options.bench_tsne).toInt(), shot);
  if (parser.isSet(options.bench_gui))
    return bench_gui(window, parser.value(options.bench_gui).toDouble(),
                     parser.positionalArguments());
  const QStringList args = parser.positionalArguments();
  if (args.isEmpty() && sweep.isEmpty())
    window.openDefaultDataset();
  else
    window.openFiles(args);
  if (!sweep.isEmpty()) window.openSweep(sweep);
  return QApplication::exec();
}
