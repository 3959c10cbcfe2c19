// A growable array in malloc'd memory whose buffer can be handed to NumPy
// without a copy (the bindings wrap it with a capsule that frees it). Growing
// and shrinking use realloc, which moves large blocks by remapping pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace gthinker {

template <typename T>
class OwnedArray {
 public:
  OwnedArray() = default;
  explicit OwnedArray(size_t n) { resize(n); }
  OwnedArray(const OwnedArray&) = delete;
  OwnedArray& operator=(const OwnedArray&) = delete;
  OwnedArray(OwnedArray&& o) noexcept { swap(o); }
  OwnedArray& operator=(OwnedArray&& o) noexcept {
    if (this != &o) {
      clear();
      swap(o);
    }
    return *this;
  }
  ~OwnedArray() { std::free(data_); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

  /// Room for at least n items (grows by half again, so appends are amortised).
  void reserve(size_t n) {
    if (n <= cap_) return;
    size_t cap = cap_ + cap_ / 2;
    if (cap < n) cap = n;
    if (cap < 256) cap = 256;
    set_capacity(cap);
  }
  void resize(size_t n) {
    reserve(n);
    size_ = n;
  }
  void append(const T* src, size_t n) {
    reserve(size_ + n);
    if (n) std::memcpy(data_ + size_, src, n * sizeof(T));
    size_ += n;
  }
  /// Gives back the memory past size().
  void shrink_to_fit() {
    if (cap_ > size_ && size_ > 0) set_capacity(size_);
  }
  /// The buffer, now the caller's to free(); the array is left empty.
  T* release() {
    T* p = data_;
    data_ = nullptr;
    size_ = cap_ = 0;
    return p;
  }
  void clear() {
    std::free(data_);
    data_ = nullptr;
    size_ = cap_ = 0;
  }

 private:
  void set_capacity(size_t cap) {
    if (cap > PTRDIFF_MAX / sizeof(T)) throw std::bad_alloc();
    void* p = std::realloc(data_, cap * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    cap_ = cap;
  }
  void swap(OwnedArray& o) noexcept {
    T* d = data_;
    data_ = o.data_;
    o.data_ = d;
    size_t s = size_;
    size_ = o.size_;
    o.size_ = s;
    s = cap_;
    cap_ = o.cap_;
    o.cap_ = s;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = 0;
};

}  // namespace gthinker
