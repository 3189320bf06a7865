#pragma once
/// \file
/// Writes the frames of a recording at a fixed frame rate: straight into an MP4 (H.264, yuv420p,
/// what every player and slide program opens) through an ffmpeg process when ffmpeg is
/// installed, otherwise as numbered PNGs in a folder with a note of the rate and the command that
/// makes the video. Frames are given one by one, in order; every frame has the first one's size,
/// made even (H.264 in yuv420p needs even dimensions). The video is written under a temporary
/// name and appears under its own only when finished, so a cancelled or failed recording leaves
/// no half-written file.

#include <QImage>
#include <QSize>
#include <QString>
#include <atomic>
#include <memory>

class QProcess;
class QThreadPool;

namespace dstudio::studio {

class VideoWriter {
 public:
  /// Whether an ffmpeg with an H.264 encoder is on the PATH (looked up once).
  static bool ffmpegAvailable();

  /// A recording named `base` (a path without extension): base.mp4 with ffmpeg (unless
  /// `frames_only`), else the folder base/ of frame-000000.png, ... Nothing is made until the
  /// first frame.
  VideoWriter(QString base, int frames_per_second, bool frames_only = false);
  /// Abandons an unfinished video (its temporary file is removed); PNGs already written stay.
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  /// Adds the next frame. False, with error() set, when the output cannot be written.
  bool add(const QImage& frame);
  /// Ends the recording: the video is finished and takes its name, or the PNGs are all on disk
  /// and the note is written. False, with error() set, on failure.
  bool finish();

  [[nodiscard]] bool isVideo() const { return video_; }
  /// The video file, or the folder of frames.
  [[nodiscard]] QString path() const;
  [[nodiscard]] int frames() const { return frames_; }
  /// The size every frame is written at (even); empty before the first frame.
  [[nodiscard]] QSize frameSize() const { return size_; }
  [[nodiscard]] int framesPerSecond() const { return fps_; }
  [[nodiscard]] QString error() const { return error_; }

 private:
  bool start(QSize size);
  [[nodiscard]] QImage fitted(const QImage& frame) const;

  QString base_;
  int fps_;
  bool video_;
  QSize size_;
  int frames_ = 0;
  bool finished_ = false;
  QString error_;
  std::unique_ptr<QProcess> ffmpeg_;
  std::unique_ptr<QThreadPool> png_writer_;
  std::shared_ptr<std::atomic<int>> png_failures_;
};

}  // namespace dstudio::studio
