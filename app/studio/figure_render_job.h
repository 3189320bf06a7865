#pragma once
/// \file
/// Draws a workspace's figure recipes again (a paper's figures) from the window: each recipe is
/// given to `dstudio figure render`, the program installed beside the studio, one after another
/// in a process of its own, so that what the window draws is exactly what the command line draws
/// and a recipe that refuses (its checkpoint or dataset changed) says why without touching the
/// window. Off the GUI thread by construction; cancellable between and within figures.

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <vector>

namespace dstudio::studio {

class FigureRenderJob : public QObject {
  Q_OBJECT
 public:
  /// How one recipe went.
  struct Result {
    QString recipe;   ///< the recipe's file
    QString out;      ///< the figure it was to draw
    bool ok = false;  ///< drawn
    QString message;  ///< what `dstudio figure render` said last (why it refused)
  };

  explicit FigureRenderJob(QObject* parent = nullptr);
  ~FigureRenderJob() override;

  /// The command-line program beside this one (or on PATH); empty when there is none.
  [[nodiscard]] static QString program();
  /// Draws each recipe into `folder` as <figure>.<format>: the recipe's figure name (made unique
  /// among these with -2, -3, ...) in the first format it records (PDF when it records none).
  /// False when a run is under way, there is nothing to draw or no program to draw with
  /// (lastError() says which).
  bool start(const QStringList& recipes, const QString& folder);
  /// Stops the figure being drawn (its file is not left half-written) and the ones after it.
  void cancel();
  [[nodiscard]] bool isRunning() const { return running_; }
  [[nodiscard]] const std::vector<Result>& results() const { return results_; }
  [[nodiscard]] const QString& lastError() const { return error_; }

 signals:
  /// Recipe `index` of `total` is being drawn.
  void progressed(int index, int total, const QString& recipe);
  /// Recipe `index` is done (results()[index]).
  void rendered(int index);
  /// Every recipe done, or the rest cancelled.
  void finished(bool cancelled);

 private:
  void next();
  void done(int exit_code, QProcess::ExitStatus status);
  // Ends the command line and whatever it started (a clip's studio and encoder).
  void killGroup();

  QProcess* process_;
  QStringList recipes_, outs_;
  std::vector<Result> results_;
  bool running_ = false, cancelled_ = false;
  QString error_;
};

}  // namespace dstudio::studio
