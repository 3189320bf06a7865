#pragma once
/// \file
/// A Viewer tab recording drawn again from its recipe (`decision-studio --render-clip RECIPE --out
/// FILE.mp4`, which `dstudio figure render` runs for a clip): the recipe's inputs are checked, the
/// episode is played again headless with the conditioning from every step the user changed it, and
/// a viewer panel of the recorded size, not shown on screen, is given that run, the same forks,
/// camera and controls, and records it frame by frame through the Record button's own path. On the
/// same build the clip log written beside the video is the first one's, frame for frame.

#include <QObject>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <functional>
#include <memory>
#include <string>

namespace dstudio::models {
class EpisodePlayer;
}

namespace dstudio::studio {

class ViewerPanel;

class ClipRender : public QObject {
  Q_OBJECT
 public:
  /// `roots`: folders the recipe's inputs moved to (read_figure_recipe).
  ClipRender(QString recipe, QString out, QStringList roots = {}, QObject* parent = nullptr);
  ~ClipRender() override;

  /// Starts drawing (from the event loop); finished() says how it ended.
  void start();

 signals:
  /// `message` says where the clip went, or why it was not drawn (nothing is left at `out` then).
  void finished(bool ok, const QString& message);

 private:
  void run();
  // run's steps: the recipe read and checked, and its run played again to the last step the
  // clip needs (throws why it cannot be); the panel made as it was, given that run; once the
  // forks are there, the clip's first step sought; there, the panel's size checked and the
  // recording started.
  std::shared_ptr<models::EpisodePlayer> replayedRun(const std::string& where);
  void showPanel(const std::shared_ptr<models::EpisodePlayer>& player);
  void seekToFirst();
  void recordClip();
  // Calls `next` once `ready` holds (checked as the panel updates), or fails saying `waiting`.
  void when(const std::function<bool()>& ready, const std::function<void()>& next,
            const QString& waiting);
  void fail(const QString& message);

  QString recipe_path_, out_;
  QStringList roots_;
  struct Plan;
  std::unique_ptr<Plan> plan_;
  std::unique_ptr<QWidget> window_;
  ViewerPanel* panel_ = nullptr;  // in window_
  QString said_;                  // the panel's last message (why a recording could not start)
  bool done_ = false;
};

}  // namespace dstudio::studio
