// VertexDeque: the master's deque V of initial vertices (usually in degeneracy
// order). GPU workers take big chunks from the front, CPU workers small chunks
// from the back. A fixed array with two cursors: chunks are contiguous ranges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gthinker {

class VertexDeque {
 public:
  explicit VertexDeque(std::vector<int32_t> vertices)
      : v_(std::move(vertices)), front_(0), back_(static_cast<int64_t>(v_.size())) {}

  bool empty() const { return front_ >= back_; }
  int64_t size() const { return back_ - front_; }

  /// Takes up to k vertices from the front into `out` (replacing its contents).
  void pop_front(int64_t k, std::vector<int32_t>& out) {
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
  int64_t front_;
  int64_t back_;
};

}  // namespace gthinker
