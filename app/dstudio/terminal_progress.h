#pragma once
// Progress on stderr: a redrawn one-line bar on a terminal, a plain line every 10 s otherwise,
// so that logs of long runs show they are alive without filling up.

#include <chrono>
#include <string>
#include <string_view>

#include "dstudio/common/progress.h"

namespace dstudio::cli {

/// Builds a Progress whose callback redraws a bar labelled `label` at most every 100 ms.
class TerminalProgress {
 public:
  explicit TerminalProgress(std::string label);
  ~TerminalProgress();
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  /// The Progress to hand to core functions.
  [[nodiscard]] const Progress& progress() const { return progress_; }

 private:
  void draw(double fraction, std::string_view stage);
  void log(double fraction, std::string_view stage);

  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;  // the start, so short work logs nothing
  Progress progress_;
};

}  // namespace dstudio::cli
