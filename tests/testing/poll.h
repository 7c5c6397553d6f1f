// PollUntil: waits for a condition that no event in this process signals (a
// daemon's state seen through its RPCs or metrics, a file another process
// writes), checking it every few milliseconds until a deadline. The one
// place tests may sleep to wait (scripts/check_no_sleeps.sh's allow-list):
// a loaded machine makes it slower, never wrong.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace ge::testing {

// True as soon as `done()` holds, false once `timeout` passed without it.
inline bool PollUntil(std::chrono::steady_clock::duration timeout, const std::function<bool()>& done,
                      std::chrono::milliseconds interval = std::chrono::milliseconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(interval);
  }
  return true;
}

}  // namespace ge::testing
