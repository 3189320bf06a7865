#pragma once
/// \file
/// A recording written frame by frame at a fixed rate, without Qt: RGB frames piped into ffmpeg
/// (H.264, yuv420p, what every player and slide program opens) when ffmpeg is installed, else
/// numbered PNGs in a folder with a note (recording.txt) of the rate and the command that makes the
/// video. Every
/// frame is cut to the first one's size made even (yuv420p needs even dimensions). The video is
/// written under a temporary name and takes its own only when finished, so an abandoned or failed
/// recording leaves no half-written file.

#include <cstdio>
#include <filesystem>
#include <string>

#include "dstudio/render/scene_renderer.h"

namespace dstudio::render {

class VideoFile {
 public:
  /// Whether an ffmpeg with the libx264 encoder is on the PATH (looked up once).
  static bool ffmpeg_available();

  /// A recording named `base` (a path without extension): base.mp4 through ffmpeg (unless
  /// `frames_only` or ffmpeg is missing), else the folder base/ of frame-000000.png, ... Nothing
  /// is made until the first frame.
  VideoFile(std::filesystem::path base, int frames_per_second, bool frames_only = false);
  /// Abandons an unfinished video: ffmpeg is stopped and its temporary file removed.
  ~VideoFile();
  VideoFile(const VideoFile&) = delete;
  VideoFile& operator=(const VideoFile&) = delete;

  /// Adds the next frame. False, with error() set, when it cannot be written.
  bool add(const Image& frame);
  /// Ends the recording: the video takes its name, or the note joins the PNGs. False, with
  /// error() set, on failure (a video with no frame is an error and leaves nothing).
  bool finish();

  [[nodiscard]] bool is_video() const { return video_; }
  /// The video file, or the folder of frames.
  [[nodiscard]] std::filesystem::path path() const;
  [[nodiscard]] int frames() const { return frames_; }
  [[nodiscard]] int width() const { return width_; }
  [[nodiscard]] int height() const { return height_; }
  [[nodiscard]] int frames_per_second() const { return fps_; }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  bool start(int width, int height);
  void abandon();

  std::filesystem::path base_;
  int fps_;
  bool video_;
  int width_ = 0, height_ = 0;
  int frames_ = 0;
  bool finished_ = false;
  std::string error_;
  std::FILE* ffmpeg_ = nullptr;
  std::filesystem::path log_;
};

}  // namespace dstudio::render
