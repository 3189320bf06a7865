#pragma once
/// \file
/// The viewer panel's recordings: Qt frames handed to render::VideoFile, which writes them at a
/// fixed frame rate straight into an MP4 through ffmpeg (PNG frames and a note without it), at
/// even dimensions, under the video's name only once finished. What is Qt's here: frames come as
/// QImages, and a frame of another size (the window was resized mid-recording) is scaled to the
/// recording's.

#include <QImage>
#include <QSize>
#include <QString>
#include <memory>

namespace dstudio::render {
class VideoFile;
}

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

  [[nodiscard]] bool isVideo() const;
  /// The video file, or the folder of frames.
  [[nodiscard]] QString path() const;
  [[nodiscard]] int frames() const;
  /// The size every frame is written at (even); empty before the first frame.
  [[nodiscard]] QSize frameSize() const;
  [[nodiscard]] int framesPerSecond() const;
  [[nodiscard]] QString error() const { return error_; }

 private:
  std::unique_ptr<render::VideoFile> file_;
  QString error_;
};

}  // namespace dstudio::studio
