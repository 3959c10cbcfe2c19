// Interruptible parallel loops for the graph kernels (reading, building and
// preparing graphs): worker threads take chunks of an index range while the
// calling thread waits and asks `keep_going` every tick (the bindings check for
// Ctrl-C and SIGTERM there, with the GIL). When it answers false, every worker
// stops at its next chunk and the call throws `Interrupted` once all have
// joined, so no native code runs after the caller has moved on.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gthinker {

/// Asked on the calling thread every tick while a parallel call runs; false stops it.
using KeepGoing = std::function<bool()>;

/// Thrown by a parallel call that `keep_going` stopped.
struct Interrupted : std::exception {
  const char* what() const noexcept override { return "interrupted"; }
};

/// Runs loops on `threads` threads; one object serves the phases of one kernel.
class Parallel {
 public:
  Parallel(int threads, KeepGoing keep_going, double tick_seconds = 0.05)
      : threads_(std::max(1, threads)), keep_going_(std::move(keep_going)), tick_(tick_seconds) {}

  int threads() const { return threads_; }

  /// Whether the call is stopping (bodies may poll it inside long chunks).
  bool stopping() const { return stop_.load(std::memory_order_relaxed); }

  /// fn(begin, end) over [0, n) in chunks of about `grain` items, taken by the
  /// threads as they go (dynamic: skewed rows balance themselves). Small ranges
  /// run on the calling thread at once.
  void for_chunks(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    grain = std::max<int64_t>(grain, 1);
    if (n <= grain || threads_ == 1) {
      if (n <= grain * 4) {  // too small to tick for
        if (n > 0) fn(0, n);
        return;
      }
    }
    std::atomic<int64_t> next{0};
    run([&](int) {
      for (;;) {
        if (stopping()) return;
        const int64_t b = next.fetch_add(grain, std::memory_order_relaxed);
        if (b >= n) return;
        fn(b, std::min(n, b + grain));
      }
    });
  }

  /// fn(t) once for each thread t in [0, threads) (each takes its own static share).
  void for_threads(const std::function<void(int)>& fn) { run(fn); }

  /// [begin, end) of share t of n items split evenly over the threads.
  std::pair<int64_t, int64_t> share(int64_t n, int t) const {
    const int64_t per = n / threads_, extra = n % threads_;
    const int64_t b = t * per + std::min<int64_t>(t, extra);
    return {b, b + per + (t < extra ? 1 : 0)};
  }

  /// Asks keep_going once (between sequential phases); throws Interrupted on false.
  void check() {
    if (stopping() || (keep_going_ && !keep_going_())) {
      stop_.store(true);
      throw Interrupted();
    }
  }

 private:
  void run(const std::function<void(int)>& body) {
    std::mutex mu;
    std::condition_variable cv;
    int running = threads_;
    std::exception_ptr error;
    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(threads_));
    for (int t = 0; t < threads_; ++t) {
      try {
        pool.emplace_back([&, t] {
          try {
            body(t);
          } catch (...) {
            std::lock_guard<std::mutex> lock(mu);
            if (!error) error = std::current_exception();
            stop_.store(true);
          }
          std::lock_guard<std::mutex> lock(mu);
          if (--running == 0) cv.notify_all();
        });
      } catch (...) {  // a thread that could not start (no memory for its stack): the
        std::lock_guard<std::mutex> lock(mu);  // started ones stop and are joined, then
        running -= threads_ - t;               // the error is raised (not std::terminate)
        if (!error) error = std::current_exception();
        stop_.store(true);
        break;
      }
    }
    {
      std::unique_lock<std::mutex> lock(mu);
      const auto tick = std::chrono::duration<double>(tick_);
      while (running > 0) {
        if (cv.wait_for(lock, tick, [&] { return running == 0; })) break;
        lock.unlock();
        const bool go = !keep_going_ || keep_going_();
        lock.lock();
        if (!go) stop_.store(true);
      }
    }
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
    if (stopping()) throw Interrupted();
  }

  int threads_;
  KeepGoing keep_going_;
  double tick_;
  std::atomic<bool> stop_{false};
};

}  // namespace gthinker
