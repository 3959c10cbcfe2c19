// WorkerContext: what compiled user code sees of its worker.
//
// The first member is a fixed int64 header that Numba-compiled code reads as
// an array (field indices in HeaderField, exported to Python by the binding so
// the two sides cannot disagree). Everything after the header is private to
// the runtime and reached from compiled code only through the extern "C"
// callbacks in bindings.cpp, which receive header[kSelf] back.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "task_arena.hpp"

namespace gthinker {

enum HeaderField : int {
  kSelf = 0,         // address of this WorkerContext
  kWorkerId = 1,
  kIndptr = 2,       // int64[n + 1]
  kNumVertices = 3,
  kIndices = 4,      // int32[nnz]
  kNumIndices = 5,
  kLabels = 6,       // int32[n] or null
  kNumLabels = 7,    // n, or 0 when the graph is unlabeled
  kCounters = 8,     // int64[n_counters], summed over workers at the end
  kNumCounters = 9,
  kMaxima = 10,      // int64[n_maxima], max over workers at the end
  kNumMaxima = 11,
  kHist = 12,        // int64[hist_rows * hist_bins], summed over workers
  kHistRows = 13,
  kHistBins = 14,
  kParams = 15,      // int64[n_params], per-run user parameters (read-only)
  kNumParams = 16,
  kEmitting = 17,    // 1 when results are being written to a file
  kCountdown = 18,   // timed_out() calls left before the clock is read again
  kTimedOut = 19,    // sticky for the rest of the current task
  kError = 20,       // error code set by checked helpers (see ErrorCode)
  kNumWorkers = 21,
  kHeaderLen = 24,
};

/// Codes in header[kError] and in the return value of the compiled entry points.
enum ErrorCode : int64_t {
  kOk = 0,
  kSpawnRaised = 1,
  kComputeRaised = 2,
  kHistogramIndex = 3,
  kCounterIndex = 4,
  kMaximumIndex = 5,
  kEmitIndex = 6,
  kEmptyRecord = 7,
};

/// A counter with one writer at a time that the progress snapshot reads from
/// another thread: relaxed atomics make those reads defined, and the
/// load-then-store increment costs no locked instruction.
/// `now` plus `seconds`, saturating: a span the clock cannot hold (1e300 s, inf)
/// is the end of time ("never"), not an overflowed, past deadline.
inline std::chrono::steady_clock::time_point seconds_after(
    std::chrono::steady_clock::time_point now, double seconds) {
  using Clock = std::chrono::steady_clock;
  const double room = std::chrono::duration<double>(Clock::time_point::max() - now).count();
  if (!(seconds < room / 2)) return Clock::time_point::max();
  return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

class StatCounter {
 public:
  void add(uint64_t n = 1) {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

struct WorkerStats {
  StatCounter vertices;       // initial tasks spawned
  StatCounter records;        // spilled task records computed
  StatCounter tasks_added;    // records created by decomposition
  double busy_seconds = 0;    // read after the job
  double idle_seconds = 0;
};

class Master;

// Cache-line aligned, and its result arrays padded (see Master's constructor):
// compiled code writes header[kCountdown] and the counters all the time, and
// two workers sharing a line would slow each other down.
struct alignas(64) WorkerContext {
  int64_t header[kHeaderLen] = {};

  Master* master = nullptr;
  std::vector<int64_t> counters, maxima, hist;  // each padded by kPad on both sides
  static constexpr size_t kPad = 8;             // one cache line of int64
  std::vector<int64_t> params;
  std::chrono::steady_clock::time_point deadline{};
  std::chrono::steady_clock::time_point early_deadline{};
  std::chrono::steady_clock::time_point gpu_early_deadline{};
  int64_t countdown_reset = 64;
  TaskArena out;          // L_o: decomposed tasks waiting to be flushed to S
  std::string emit_buf;   // formatted results waiting for the ResultWriter
  WorkerStats stats;

  int64_t* counter_data() { return counters.data() + kPad; }
  int64_t* maxima_data() { return maxima.data() + kPad; }
  int64_t* hist_data() { return hist.data() + kPad; }
  int64_t counter(size_t i) const { return counters[kPad + i]; }
  int64_t maximum(size_t i) const { return maxima[kPad + i]; }
  int64_t hist_at(size_t i) const { return hist[kPad + i]; }

  /// Starts a new task: fresh time budget, timed-out flag cleared.
  void begin_task(double budget_seconds, double early_split_seconds,
                  double gpu_idle_split_seconds) {
    const auto now = std::chrono::steady_clock::now();
    deadline = seconds_after(now, budget_seconds);
    const auto after = [&](double seconds) {
      return seconds > 0 ? seconds_after(now, seconds) : deadline;
    };
    early_deadline = after(early_split_seconds);
    gpu_early_deadline = after(gpu_idle_split_seconds);
    header[kTimedOut] = 0;
    header[kCountdown] = countdown_reset;
  }
};

}  // namespace gthinker
