#include "terminal_progress.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace dstudio::cli {

TerminalProgress::TerminalProgress(std::string_view label)
    : label_(label), enabled_(isatty(STDERR_FILENO) == 1) {
  if (enabled_) progress_.report = [this](double f, std::string_view stage) { draw(f, stage); };
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
