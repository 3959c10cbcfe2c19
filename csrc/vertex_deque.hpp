// VertexDeque: the master's deque V of initial vertices (usually in degeneracy
// order). GPU workers take big chunks from the front, CPU workers small chunks
// from the back. A fixed array with two cursors: chunks are contiguous ranges.
// Optional cuts (increasing positions in V) end the front chunks early: with several
// GPUs the runtime cuts V into chunks of about even estimated cost (heavy roots first,
// so that they spread over every GPU), and each GPU's driver thread takes the next one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gthinker {

class VertexDeque {
 public:
  explicit VertexDeque(std::vector<int32_t> vertices)
      : v_(std::move(vertices)), front_(0), back_(static_cast<int64_t>(v_.size())) {}

  /// Front chunks end at these positions (increasing; see the header comment).
  void set_cuts(std::vector<int64_t> cuts) {
    cuts_ = std::move(cuts);
    next_cut_ = 0;
  }

  bool empty() const { return front_ >= back_; }
  int64_t size() const { return back_ - front_; }

  /// Takes up to k vertices from the front into `out` (replacing its contents).
  /// With cuts, the chunk also ends at the next cut after the front.
  void pop_front(int64_t k, std::vector<int32_t>& out) {
    while (next_cut_ < cuts_.size() && cuts_[next_cut_] <= front_) ++next_cut_;
    if (next_cut_ < cuts_.size()) k = std::min(k, cuts_[next_cut_] - front_);
    k = std::min(k, size());
    out.assign(v_.begin() + front_, v_.begin() + front_ + k);
    front_ += k;
  }

  /// Appends up to k vertices from the front to `out`; returns how many.
  int64_t take_front(int64_t k, std::vector<int32_t>& out) {
    k = std::min(k, size());
    out.insert(out.end(), v_.begin() + front_, v_.begin() + front_ + k);
    front_ += k;
    return k;
  }

  /// Takes up to k vertices from the back into `out` (replacing its contents),
  /// keeping their deque order.
  void pop_back(int64_t k, std::vector<int32_t>& out) {
    k = std::min(k, size());
    out.assign(v_.begin() + back_ - k, v_.begin() + back_);
    back_ -= k;
  }

 private:
  std::vector<int32_t> v_;
  std::vector<int64_t> cuts_;
  size_t next_cut_ = 0;
  int64_t front_;
  int64_t back_;
};

}  // namespace gthinker
