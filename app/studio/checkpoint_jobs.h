#pragma once
/// \file
/// The work of the Attention tab on checkpoints: opening one (the file read once, inspected on 16
/// windows of its dataset as `dstudio analyze attention` does, and its player made to act in the
/// environment) and comparing a second one with it on the same windows. Each runs as a Job of its
/// own, which the window's status bar follows; the newest request wins, a running one stops first.
/// The maps go to the Attention view here; what the rest of the window does with an opened model
/// (its viewer, rollouts, analyses, t-SNE) is the window's, told by `opened`.

#include <QObject>
#include <QString>
#include <memory>
#include <vector>

#include "dstudio/models/checkpoint.h"
#include "dstudio/models/windows.h"

namespace dstudio::models {
class EpisodePlayer;
}

namespace dstudio::viz {
class AttentionMapView;
}

namespace dstudio::studio {

class Job;

/// A checkpoint as an opening delivers it, on the GUI thread.
struct OpenedCheckpoint {
  QString path;
  QString title;  ///< "label (variant)", as the views title it
  models::DatasetInspection inspected;
  std::shared_ptr<models::EpisodePlayer> player;  ///< null when it cannot act: see player_error
  QString player_error;
  std::shared_ptr<const models::LoadedCheckpoint> checkpoint;  ///< the file, read once
};

class CheckpointJobs : public QObject {
  Q_OBJECT
 public:
  /// Drives `view` with the two jobs (the window's, made by its addJob).
  CheckpointJobs(viz::AttentionMapView* view, Job* open_job, Job* compare_job,
                 QObject* parent = nullptr);

  /// Reads and inspects `path` on a worker; while another opening runs, that one stops and this
  /// one follows.
  void open(const QString& path);
  void cancelOpen();
  /// Inspects `path` on the open checkpoint's windows on a worker and shows the two maps compared.
  /// False, and nothing starts, while no checkpoint is open.
  bool compare(const QString& path);
  void cancelComparison();
  [[nodiscard]] bool isOpening() const;
  [[nodiscard]] bool isComparing() const;
  /// The job that opens checkpoints (the status bar's Cancel speaks of it).
  [[nodiscard]] Job* openJob() const { return open_job_; }
  /// The open checkpoint ("" before one opened) and the one compared with it ("" for none).
  [[nodiscard]] QString path() const { return path_; }
  [[nodiscard]] QString comparedPath() const { return compared_; }
  /// What the views call a checkpoint: its label and variant.
  static QString title(const QString& path, const models::CheckpointInfo& info);

 signals:
  /// A line for the status bar.
  void status(const QString& text);
  /// A checkpoint was read and inspected; the Attention view shows its maps already.
  void opened(const dstudio::studio::OpenedCheckpoint& checkpoint);
  /// An opening ended without a checkpoint: cancelled, or failed with `error`.
  void openStopped(const QString& path, bool cancelled, const QString& error);
  /// The Attention view compares the open checkpoint with `path` (described by `info`).
  void compared(const QString& path, const dstudio::models::CheckpointInfo& info);
  /// A comparison ended without a result: cancelled, or failed with `error`.
  void comparisonStopped(const QString& path, bool cancelled, const QString& error);

 private:
  void show(const OpenedCheckpoint& checkpoint);

  viz::AttentionMapView* view_;
  Job* open_job_;
  Job* compare_job_;
  QString opening_;  // the checkpoint the opening job runs on
  QString path_, compared_;
  std::vector<models::Window> windows_;  // the open checkpoint's: a comparison's inputs
};

}  // namespace dstudio::studio
