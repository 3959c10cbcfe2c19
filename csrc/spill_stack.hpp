// SpillStack: the shared stack S of decomposed (spilled) tasks.
//
// Not internally synchronised: the Master owns it and guards it with its own
// mutex, so that "S became non-empty" and "wake the master" happen under one
// lock and no wake-up is lost. Tracks its peak size and enforces a byte limit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "task_arena.hpp"

namespace gthinker {

class SpillStack {
 public:
  explicit SpillStack(size_t limit_bytes) : limit_bytes_(limit_bytes) {}

  bool empty() const { return arena_.empty(); }
  size_t num_tasks() const { return arena_.num_tasks(); }
  size_t bytes() const { return arena_.bytes(); }
  size_t peak_bytes() const { return peak_bytes_; }
  size_t peak_tasks() const { return peak_tasks_; }
  size_t limit_bytes() const { return limit_bytes_; }
  uint64_t total_pushed() const { return total_pushed_; }

  /// Would pushing `extra` more bytes pass the limit?
  bool would_exceed(size_t extra) const { return arena_.bytes() + extra > limit_bytes_; }

  /// Moves all records of `batch` onto the top of S (one call per flush).
  void push_batch(TaskArena& batch) {
    total_pushed_ += batch.num_tasks();
    arena_.append_all(batch);
    if (arena_.bytes() > peak_bytes_) peak_bytes_ = arena_.bytes();
    if (arena_.num_tasks() > peak_tasks_) peak_tasks_ = arena_.num_tasks();
  }

  /// Pops up to `k` records from the top into `out`.
  size_t pop_batch(size_t k, TaskArena& out) {
    size_t got = arena_.pop_top(k, out);
    arena_.shrink_if_sparse();
    return got;
  }

  /// Pops up to `k` records from the top into `out` for another job (counted
  /// apart from the batches this job's workers take).
  size_t take(size_t k, TaskArena& out) {
    size_t got = pop_batch(k, out);
    taken_ += got;
    return got;
  }
  /// Records taken out through take (given to another job).
  uint64_t total_taken() const { return taken_; }

 private:
  TaskArena arena_;
  size_t limit_bytes_;
  size_t peak_bytes_ = 0;
  size_t peak_tasks_ = 0;
  uint64_t total_pushed_ = 0;
  uint64_t taken_ = 0;
};

}  // namespace gthinker
