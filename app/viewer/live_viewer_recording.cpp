// decision-viewer's recordings: clips of the window, frame by frame, with what each frame shows.
// See live_viewer.h.

#include <cstring>

#include "dstudio/common/error.h"
#include "dstudio/common/text.h"
#include "live_viewer_state.h"

namespace dstudio::viewer {

using detail::at_step;

// ---------------------------------------------------------------------------------------------
// [SECTION] Recording

render::Image LiveViewer::State::read_pixels() const {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  render::Image image;
  image.width = w, image.height = h;
  std::vector<std::uint8_t> flipped(static_cast<std::size_t>(3) * w * h);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, flipped.data());
  image.rgb.resize(flipped.size());
  const std::size_t row = static_cast<std::size_t>(3) * w;
  for (int y = 0; y < h; ++y) std::memcpy(&image.rgb[y * row], &flipped[(h - 1 - y) * row], row);
  return image;
}

void LiveViewer::State::record_step() {
  if (!video || !record_frame_ready) return;
  if (!video->add(read_pixels())) {
    message = "recording failed: " + video->error();
    video.reset();
    live->set_speed(speed);
    return;
  }
  ++recorded;
  if (clip_log && displayed) {
    models::ClipLog::Frame f;
    f.step = display_step;
    f.return_so_far = displayed->return_so_far;
    f.target = displayed->target;
    f.zeroing = models::to_string(displayed->zeroing);
    f.interventions = displayed->interventions;
    for (std::size_t b = 0; b < branches.size() && b < branch_frames.size(); ++b)
      if (const auto bf = at_step(branch_frames[b], display_step))
        f.branches.push_back(
            {branches[b].label, branches[b].fork_step, bf->step, bf->return_so_far});
    clip_log->add(std::move(f));
  }
}

bool LiveViewer::State::start_recording(const fs::path& base, int fps) {
  if (video) {
    message = "already recording to " + video->path().string();
    return false;
  }
  if (!displayed) {
    message = "nothing to record yet";
    return false;
  }
  // At the end of an ended episode there is nothing after the step on screen: no one-frame file.
  if (shown.at_end()) {
    notice("nothing to record: the episode ended at step " + std::to_string(shown.cursor) +
           "; go back (Home) or start a new episode first");
    return false;
  }
  record_fps = std::clamp(fps, 1, 120);
  video = std::make_unique<render::VideoFile>(base, record_fps);
  record_first_step = shown.cursor;
  record_speed = speed > 0 ? speed : 1.0;
  // "max" has no clock to record by: the clip plays at 1x, and the user is told.
  const std::string at_1x =
      speed > 0 ? std::string() : " (at 1x: \"max\" plays as fast as the policy acts, no clock)";
  recorded = 0;
  clip_log = std::make_unique<models::ClipLog>(
      "decision-viewer",
      live->replay() ? options.dataset.string() + " episode " + std::to_string(options.episode)
                     : options.checkpoint.string(),
      shown.seed, record_first_step, record_fps, record_speed);
  // The policy runs ahead at full speed; each recorded frame waits for the step it shows.
  live->set_speed(0.0);
  live->play();
  message = "recording to " + video->path().string() + at_1x;
  return true;
}

void LiveViewer::State::finish_recording(const std::string& why) {
  if (!video) return;
  last_recording = video->path();
  std::string prefix = why.empty() ? std::string() : "recording ended (" + why + "): ";
  if (clip_log && video->frames() > 0) {
    try {
      clip_log->write(models::ClipLog::path_for(video->path()));
    } catch (const Error& e) {
      prefix += std::string(e.what()) + "; ";
    }
  }
  clip_log.reset();
  if (video->finish())
    notice(prefix + "saved " + video->path().string() + " (" + std::to_string(video->frames()) +
           " frames, " + fixed_number(static_cast<double>(video->frames()) / record_fps, 1) +
           " s)");
  else
    notice(prefix + "recording failed: " + video->error());
  video.reset();
  live->pause();
  live->set_speed(speed);
}

}  // namespace dstudio::viewer
