// A recording's frames as MP4 or PNGs, without Qt. See video_file.h.

#include "dstudio/render/video_file.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

namespace dstudio::render {
namespace {

namespace fs = std::filesystem;

// A path as one word of a POSIX shell command.
std::string quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

fs::path part_of(const fs::path& video) {
  return video.string() + ".part";
}

std::string tail_of(const fs::path& log) {
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  const auto cut = s.rfind('\n');
  return cut == std::string::npos ? s : s.substr(cut + 1);
}

}  // namespace

bool VideoFile::ffmpeg_available() {
  static const bool available = [] {
    std::FILE* probe = popen("ffmpeg -hide_banner -encoders 2>/dev/null", "r");
    if (!probe) return false;
    std::string out;
    char buffer[4096];
    while (const auto n = std::fread(buffer, 1, sizeof buffer, probe)) out.append(buffer, n);
    return pclose(probe) == 0 && out.find("libx264") != std::string::npos;
  }();
  return available;
}

VideoFile::VideoFile(fs::path base, int frames_per_second, bool frames_only)
    : base_(std::move(base)),
      fps_(std::max(1, frames_per_second)),
      video_(!frames_only && ffmpeg_available()) {}

VideoFile::~VideoFile() {
  if (!finished_) abandon();
}

void VideoFile::abandon() {
  if (ffmpeg_) {
    pclose(ffmpeg_);  // ffmpeg sees the end of its input and exits; the partial file goes
    ffmpeg_ = nullptr;
    std::error_code ignored;
    fs::remove(part_of(path()), ignored);
  }
  if (!log_.empty()) {
    std::error_code ignored;
    fs::remove(log_, ignored);
  }
}

fs::path VideoFile::path() const {
  return video_ ? fs::path(base_.string() + ".mp4") : base_;
}

bool VideoFile::start(int width, int height) {
  width_ = width & ~1;
  height_ = height & ~1;
  if (width_ < 2 || height_ < 2) {
    error_ = "the frame is empty";
    return false;
  }
  std::error_code ec;
  fs::create_directories(video_ ? fs::absolute(path()).parent_path() : base_, ec);
  if (ec) {
    error_ = "cannot make the folder of " + path().string() + ": " + ec.message();
    return false;
  }
  if (!video_) return true;
  // A dead ffmpeg must make a write fail, not end the program.
  std::signal(SIGPIPE, SIG_IGN);
  log_ = fs::temp_directory_path() / ("dstudio-ffmpeg-" + std::to_string(::getpid()) + "-" +
                                      base_.filename().string() + ".log");
  const std::string command =
      "ffmpeg -hide_banner -loglevel error -y -f rawvideo -pixel_format rgb24 -video_size " +
      std::to_string(width_) + "x" + std::to_string(height_) + " -framerate " +
      std::to_string(fps_) +
      " -i pipe:0 -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p -movflags +faststart -f "
      "mp4 " +
      quoted(part_of(path()).string()) + " 2>" + quoted(log_.string());
  ffmpeg_ = popen(command.c_str(), "w");
  if (!ffmpeg_) {
    error_ = std::string("ffmpeg did not start: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool VideoFile::add(const Image& frame) {
  if (finished_) {
    error_ = "the recording is finished";
    return false;
  }
  if (frames_ == 0 && !start(frame.width, frame.height)) return false;
  if (frame.width < width_ || frame.height < height_) {
    error_ = "frame " + std::to_string(frames_) + " is " + std::to_string(frame.width) + "x" +
             std::to_string(frame.height) + ", smaller than the recording's " +
             std::to_string(width_) + "x" + std::to_string(height_);
    return false;
  }
  // The top-left width_ x height_ of the frame.
  std::vector<std::uint8_t> rows(static_cast<std::size_t>(3) * width_ * height_);
  for (int y = 0; y < height_; ++y)
    std::memcpy(&rows[static_cast<std::size_t>(3) * width_ * y],
                &frame.rgb[static_cast<std::size_t>(3) * frame.width * y],
                static_cast<std::size_t>(3) * width_);
  if (video_) {
    if (std::fwrite(rows.data(), 1, rows.size(), ffmpeg_) != rows.size()) {
      error_ = "ffmpeg stopped taking frames: " + tail_of(log_);
      return false;
    }
  } else {
    char name[32];
    std::snprintf(name, sizeof name, "frame-%06d.png", frames_);
    try {
      write_png(base_ / name, Image{width_, height_, std::move(rows)});
    } catch (const RenderError& e) {
      error_ = e.what();
      return false;
    }
  }
  ++frames_;
  return true;
}

bool VideoFile::finish() {
  if (finished_) return error_.empty();
  if (frames_ == 0) {
    error_ = "no frame was recorded";
    abandon();
    finished_ = true;
    return false;
  }
  finished_ = true;
  if (!video_) {
    std::ofstream note(base_ / "recording.txt");
    note << "frames " << frames_ << "\nframes_per_second " << fps_ << "\nwidth " << width_
         << "\nheight " << height_ << "\n"
         << "# ffmpeg was not found; the video these frames make:\n"
         << "ffmpeg -framerate " << fps_
         << " -i frame-%06d.png -c:v libx264 -pix_fmt yuv420p video.mp4\n";
    if (!note) error_ = "cannot write " + (base_ / "recording.txt").string();
    return error_.empty();
  }
  const int status = pclose(ffmpeg_);
  ffmpeg_ = nullptr;
  std::error_code ec;
  if (status != 0) {
    error_ = "ffmpeg failed: " + tail_of(log_);
    fs::remove(part_of(path()), ec);
  } else {
    fs::rename(part_of(path()), path(), ec);
    if (ec) error_ = "cannot name the video " + path().string() + ": " + ec.message();
  }
  fs::remove(log_, ec);
  return error_.empty();
}

}  // namespace dstudio::render
