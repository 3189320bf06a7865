#pragma once
/// \file
/// Progress reporting and cooperative cancellation for long work in core.
///
/// Every long computation in core is a plain function that takes a `Progress` (which may be
/// empty) and polls it. The command line passes a terminal progress bar; the GUI runs the same
/// function on a worker thread and forwards the callback to a progress widget. Cancelling makes
/// the function throw `Cancelled` at its next poll, so it never returns a half-built result.

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dstudio {

/// Thrown by long work when its `CancelToken` was triggered.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled") {}
};

/// A shareable one-bit cancellation request. Copies refer to the same flag.
class CancelToken {
 public:
  CancelToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  void cancel() const { flag_->store(true, std::memory_order_relaxed); }
  [[nodiscard]] bool cancelled() const { return flag_->load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

/// Callback receiving the fraction done in [0, 1] and a short description of the current stage.
using ProgressFn = std::function<void(double fraction, std::string_view stage)>;

/// What a long function receives: an optional callback and an optional cancel token.
struct Progress {
  ProgressFn report;
  CancelToken cancel;

  /// Reports progress (if anyone listens) and throws `Cancelled` if cancellation was requested.
  void update(double fraction, std::string_view stage) const {
    if (cancel.cancelled()) throw Cancelled();
    if (report) report(fraction, stage);
  }
  /// Throws `Cancelled` if cancellation was requested.
  void check() const {
    if (cancel.cancelled()) throw Cancelled();
  }
  /// This progress seen through [from, to]: a sub-task reports its own fractions in [0, 1], and
  /// they land in its share of the whole; cancelling either cancels both.
  [[nodiscard]] Progress part(double from, double to) const {
    Progress p;
    p.cancel = cancel;
    if (report)
      p.report = [report = report, from, to](double f, std::string_view stage) {
        report(from + (to - from) * f, stage);
      };
    return p;
  }
};

}  // namespace dstudio
