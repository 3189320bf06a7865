#pragma once
// A request to an object's worker thread (the trainer's, the live player's): the change is made
// under the shared state's lock, and the thread, which may be waiting, is woken to act on it.

#include <mutex>

namespace dstudio::models {

/// `shared` has a `mutex` and a condition variable `wake` the worker waits on.
template <class Shared, class Change>
void request(Shared& shared, Change&& change) {
  {
    std::lock_guard lock(shared.mutex);
    change();
  }
  shared.wake.notify_all();
}

}  // namespace dstudio::models
