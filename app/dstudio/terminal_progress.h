#pragma once
// A one-line progress bar on stderr, drawn only when stderr is a terminal so that scripts and
// logs see clean output.

#include <chrono>
#include <string_view>

#include "dstudio/common/progress.h"

namespace dstudio::cli {

/// Builds a Progress whose callback redraws a bar labelled `label` at most every 100 ms.
class TerminalProgress {
 public:
  explicit TerminalProgress(std::string_view label);
  ~TerminalProgress();
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  /// The Progress to hand to core functions.
  [[nodiscard]] const Progress& progress() const { return progress_; }

 private:
  void draw(double fraction, std::string_view stage);

  std::string_view label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
  Progress progress_;
};

}  // namespace dstudio::cli
