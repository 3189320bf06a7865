#include "terminal_progress.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>

namespace dstudio::cli {

TerminalProgress::TerminalProgress(std::string label)
    : label_(std::move(label)),
      enabled_(isatty(STDERR_FILENO) == 1),
      last_(std::chrono::steady_clock::now()) {
  progress_.report = [this](double f, std::string_view stage) {
    if (enabled_)
      draw(f, stage);
    else
      log(f, stage);
  };
}

void TerminalProgress::log(double fraction, std::string_view stage) {
  // Logs and pipes get a plain line now and then instead of a redrawn bar.
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::seconds(10)) return;
  last_ = now;
  std::fprintf(stderr, "%.*s: %3.0f%% %.*s\n", static_cast<int>(label_.size()), label_.data(),
               100.0 * fraction, static_cast<int>(stage.size()), stage.data());
}

TerminalProgress::~TerminalProgress() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void TerminalProgress::draw(double fraction, std::string_view stage) {
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && fraction < 1.0 && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  drawn_ = true;
  constexpr int width = 30;
  const int filled = static_cast<int>(fraction * width + 0.5);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(width, '.');
  std::fprintf(stderr, "\r\033[K%.*s [%s] %3.0f%% %.*s", static_cast<int>(label_.size()),
               label_.data(), bar.c_str(), 100.0 * fraction, static_cast<int>(stage.size()),
               stage.data());
  std::fflush(stderr);
}

}  // namespace dstudio::cli
