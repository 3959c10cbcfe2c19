// TaskArena: flat int32 task records stored back to back, no per-task objects.
//
// A record is an opaque int32 sequence whose layout belongs to the application
// (e.g. MCE keeps [|R|, |P|, |X|, R..., P..., X...]). Records move between the
// spill stack S, the per-worker output buffers and the GPU worker's host
// buffer H by memcpy of whole ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace gthinker {

class TaskArena {
 public:
  /// Number of records held.
  size_t num_tasks() const { return starts_.size(); }
  bool empty() const { return starts_.empty(); }
  /// Bytes held by the records and their index (what S reports as its size).
  size_t bytes() const {
    return data_.size() * sizeof(int32_t) + starts_.size() * sizeof(int64_t);
  }

  /// Appends one record of `len` int32 values.
  void push(const int32_t* rec, int64_t len) {
    starts_.push_back(static_cast<int64_t>(data_.size()));
    data_.insert(data_.end(), rec, rec + len);
  }

  /// Record i as (pointer, length). Valid until the arena is modified.
  const int32_t* record(size_t i, int64_t* len) const {
    int64_t s = starts_[i];
    int64_t e = (i + 1 < starts_.size()) ? starts_[i + 1] : static_cast<int64_t>(data_.size());
    *len = e - s;
    return data_.data() + s;
  }

  /// Moves every record of `other` onto the top of this arena; `other` ends empty.
  void append_all(TaskArena& other) {
    if (other.empty()) return;
    const int64_t base = static_cast<int64_t>(data_.size());
    data_.insert(data_.end(), other.data_.begin(), other.data_.end());
    starts_.reserve(starts_.size() + other.starts_.size());
    for (int64_t s : other.starts_) starts_.push_back(base + s);
    other.clear();
  }

  /// Moves up to `k` records from the top (the most recently pushed) into `out`.
  /// Returns the number moved. Records keep their relative order.
  size_t pop_top(size_t k, TaskArena& out) {
    if (k > starts_.size()) k = starts_.size();
    if (k == 0) return 0;
    const size_t first = starts_.size() - k;
    const int64_t cut = starts_[first];
    const int64_t base = static_cast<int64_t>(out.data_.size());
    out.data_.insert(out.data_.end(), data_.begin() + cut, data_.end());
    for (size_t i = first; i < starts_.size(); ++i) out.starts_.push_back(base + starts_[i] - cut);
    data_.resize(static_cast<size_t>(cut));
    starts_.resize(first);
    return k;
  }

  void clear() {
    data_.clear();
    starts_.clear();
  }

  /// Releases memory when the arena holds far more capacity than it uses.
  void shrink_if_sparse() {
    if (data_.capacity() > (1u << 20) && data_.size() * 4 < data_.capacity()) data_.shrink_to_fit();
    if (starts_.capacity() > (1u << 16) && starts_.size() * 4 < starts_.capacity())
      starts_.shrink_to_fit();
  }

 private:
  std::vector<int32_t> data_;
  std::vector<int64_t> starts_;
};

}  // namespace gthinker
