#include "csr_kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

namespace gthinker {

namespace {

constexpr int64_t kRowGrain = 4096;      // rows per chunk (dynamic, so hubs balance)
constexpr int64_t kItemGrain = 1 << 16;  // pairs or ids per chunk

template <typename T>
inline T fetch_add(T* p, T x) {
  return __atomic_fetch_add(p, x, __ATOMIC_RELAXED);
}

/// out[0] = 0, out[i + 1] = out[i] + in[i] for i < n (out has n + 1 entries).
template <typename In, typename Out>
void exclusive_scan(const In* in, int64_t n, Out* out, Parallel& par) {
  const int T = par.threads();
  if (n < (int64_t{1} << 16) || T == 1) {
    Out s = 0;
    out[0] = 0;
    for (int64_t i = 0; i < n; ++i) out[i + 1] = (s += static_cast<Out>(in[i]));
    return;
  }
  std::vector<Out> sums(static_cast<size_t>(T) + 1, 0);
  par.for_threads([&](int t) {
    auto [b, e] = par.share(n, t);
    Out s = 0;
    for (int64_t i = b; i < e; ++i) s += static_cast<Out>(in[i]);
    sums[static_cast<size_t>(t) + 1] = s;
  });
  for (int t = 0; t < T; ++t) sums[t + 1] += sums[t];
  out[0] = 0;
  par.for_threads([&](int t) {
    auto [b, e] = par.share(n, t);
    Out s = sums[static_cast<size_t>(t)];
    for (int64_t i = b; i < e; ++i) out[i + 1] = (s += static_cast<Out>(in[i]));
  });
}

template <typename T>
void fill(T* p, int64_t n, T value, Parallel& par) {
  par.for_chunks(n, int64_t{1} << 20, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, value); });
}

/// Packs rows whose kept lengths are keep[r] (each row's kept entries at its
/// start) so that they follow each other; rewrites indptr. Two phases: each
/// thread packs its share of rows within its own span, then the spans move
/// down in order (each lands at or below where it was).
void compact_rows(OwnedArray<int64_t>& indptr, OwnedArray<int32_t>& indices, const int64_t* keep,
                  int64_t n, Parallel& par) {
  OwnedArray<int64_t> packed(static_cast<size_t>(n) + 1);
  exclusive_scan(keep, n, packed.data(), par);
  const int T = par.threads();
  int32_t* idx = indices.data();
  const int64_t* old = indptr.data();
  par.for_threads([&](int t) {
    auto [b, e] = par.share(n, t);
    int64_t dst = old[b];
    for (int64_t r = b; r < e; ++r) {
      if (dst != old[r]) std::memmove(idx + dst, idx + old[r], static_cast<size_t>(keep[r]) * 4);
      dst += keep[r];
    }
  });
  for (int t = 0; t < T; ++t) {
    auto [b, e] = par.share(n, t);
    const int64_t len = packed[static_cast<size_t>(e)] - packed[static_cast<size_t>(b)];
    if (len && packed[static_cast<size_t>(b)] != old[b])
      std::memmove(idx + packed[static_cast<size_t>(b)], idx + old[b], static_cast<size_t>(len) * 4);
  }
  indices.resize(static_cast<size_t>(packed[static_cast<size_t>(n)]));
  indices.shrink_to_fit();
  indptr = std::move(packed);
}

}  // namespace

template <typename Id>
void min_max(const Id* a, int64_t count, int64_t* lo, int64_t* hi, Parallel& par) {
  std::vector<int64_t> los(static_cast<size_t>(par.threads()), INT64_MAX);
  std::vector<int64_t> his(static_cast<size_t>(par.threads()), INT64_MIN);
  if (count == 0) {
    *lo = *hi = 0;
    return;
  }
  par.for_threads([&](int t) {
    auto [b, e] = par.share(count, t);
    int64_t l = INT64_MAX, h = INT64_MIN;
    for (int64_t i = b; i < e; ++i) {
      l = std::min(l, static_cast<int64_t>(a[i]));
      h = std::max(h, static_cast<int64_t>(a[i]));
    }
    los[static_cast<size_t>(t)] = l;
    his[static_cast<size_t>(t)] = h;
  });
  *lo = *std::min_element(los.begin(), los.end());
  *hi = *std::max_element(his.begin(), his.end());
}

template <typename Id>
void remap_dense(Id* a, int64_t count, const int64_t* extra, int64_t extra_count,
                 int64_t max_id, OwnedArray<int64_t>& ids, Parallel& par) {
  const int64_t size = max_id + 1;
  OwnedArray<uint8_t> present(static_cast<size_t>(size));
  fill<uint8_t>(present.data(), size, 0, par);
  par.for_chunks(count, kItemGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) __atomic_store_n(&present[static_cast<size_t>(a[i])], 1, __ATOMIC_RELAXED);
  });
  for (int64_t i = 0; i < extra_count; ++i) present[static_cast<size_t>(extra[i])] = 1;
  OwnedArray<int32_t> number(static_cast<size_t>(size) + 1);
  exclusive_scan(present.data(), size, number.data(), par);
  ids.resize(static_cast<size_t>(number[static_cast<size_t>(size)]));
  par.for_chunks(size, int64_t{1} << 18, [&](int64_t b, int64_t e) {
    for (int64_t x = b; x < e; ++x)
      if (present[static_cast<size_t>(x)]) ids[static_cast<size_t>(number[static_cast<size_t>(x)])] = x;
  });
  if (number[static_cast<size_t>(size)] == size) return;  // every id in 0..max_id: each keeps its number
  par.for_chunks(count, kItemGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) a[i] = static_cast<Id>(number[static_cast<size_t>(a[i])]);
  });
}

template void min_max<int64_t>(const int64_t*, int64_t, int64_t*, int64_t*, Parallel&);
template void min_max<int32_t>(const int32_t*, int64_t, int64_t*, int64_t*, Parallel&);
template void remap_dense<int64_t>(int64_t*, int64_t, const int64_t*, int64_t, int64_t,
                                   OwnedArray<int64_t>&, Parallel&);
template void remap_dense<int32_t>(int32_t*, int64_t, const int64_t*, int64_t, int64_t,
                                   OwnedArray<int64_t>&, Parallel&);

namespace {

/// Row boundaries that split rows [0, n) into one range per thread with about as many
/// entries each (ptr: the row offsets).
std::vector<int64_t> rows_by_entries(const int64_t* ptr, int64_t n, int threads) {
  std::vector<int64_t> first(static_cast<size_t>(threads) + 1, n);
  for (int t = 0; t <= threads; ++t)
    first[static_cast<size_t>(t)] = std::lower_bound(ptr, ptr + n + 1, ptr[n] / threads * t) - ptr;
  first.back() = n;
  first.front() = 0;
  return first;
}

/// The endpoint pairs (u[i * stride], v[i * stride]) the row builders read, and what
/// one pass over them found: whether every id lies in [0, n), and whether the pairs
/// come in order of their smaller end (as an edge list written row by row does:
/// `gthinker generate`, most SNAP files with `u < v`).
template <typename Id>
struct Pairs {
  const Id* u;
  const Id* v;
  int64_t stride;
  int64_t count;

  int64_t a(int64_t i) const { return static_cast<int64_t>(u[i * stride]); }
  int64_t c(int64_t i) const { return static_cast<int64_t>(v[i * stride]); }
  int64_t low(int64_t i) const { return std::min(a(i), c(i)); }

  /// The first pair whose smaller end is at least x (the pairs in that order).
  int64_t first_at_least(int64_t x) const {
    int64_t lo = 0, hi = count;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (low(mid) < x) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
};

/// One parallel pass: throws std::out_of_range for an id outside [0, n); returns
/// whether the smaller ends never decrease.
template <typename Id>
bool check_pairs(const Pairs<Id>& pairs, int64_t n, Parallel& par) {
  std::atomic<bool> out_of_range{false}, unordered{false};
  par.for_chunks(pairs.count, kItemGrain, [&](int64_t b, int64_t e) {
    const Pairs<Id> p = pairs;
    const uint64_t top = static_cast<uint64_t>(n);
    bool bad = false, down = false;
    int64_t prev = b > 0 ? std::max<int64_t>(p.low(b - 1), 0) : 0;
    for (int64_t i = b; i < e; ++i) {
      const int64_t x = p.a(i), y = p.c(i);
      bad |= static_cast<uint64_t>(x) >= top || static_cast<uint64_t>(y) >= top;
      const int64_t low = std::min(x, y);
      down |= low < prev;
      prev = low;
    }
    if (bad) out_of_range.store(true);
    if (down) unordered.store(true);
  });
  if (out_of_range.load()) throw std::out_of_range("vertex id out of range [0, n)");
  return !unordered.load();
}

/// The rows of the pairs: both entries of each pair (symmetric rows), or with `upper`
/// only max(a, c) in row min(a, c); sorted, loops and repeats dropped and counted.
template <typename Id>
Csr build_rows(const Id* u, const Id* v, int64_t stride, int64_t count, int64_t n, bool upper,
               Parallel& par) {
  // Each thread owns a range of rows and keeps the entries of its rows: no atomics
  // (their fences would serialise the cache misses), and each row gets its entries in
  // input order, so sorted input gives sorted rows. Pairs in order of their smaller
  // end (upper rows only) give each thread its rows' pairs as one span, found by a
  // binary search; other pairs are each read by every thread.
  const Pairs<Id> all{u, v, stride, count};
  const bool spans = check_pairs(all, n, par) && upper;
  Csr out;
  OwnedArray<int64_t> cursor(static_cast<size_t>(n) + 1);  // degrees, then write positions
  fill<int64_t>(cursor.data(), n + 1, 0, par);
  std::atomic<int64_t> loops{0};
  // fn(i, a, c) for the pairs i (not loops) that may hold an entry of rows [lo, hi);
  // returns the loops among those read (each counted once over all threads)
  auto each_pair = [&](int64_t lo, int64_t hi, bool first, auto&& fn) {
    const Pairs<Id> p = all;
    const int64_t b = spans ? p.first_at_least(lo) : 0, e = spans ? p.first_at_least(hi) : p.count;
    int64_t l = 0;
    for (int64_t i = b; i < e; ++i) {
      const int64_t x = p.a(i), y = p.c(i);
      if (x == y) {
        ++l;
        continue;
      }
      fn(x, y);
      if ((i & 0xFFFFF) == 0 && par.stopping()) break;
    }
    if (spans || first) loops.fetch_add(l);
  };
  int64_t* cur = cursor.data();
  par.for_threads([&](int t) {
    auto [lo, hi] = par.share(n, t);
    each_pair(lo, hi, t == 0, [&, lo = lo, hi = hi](int64_t x, int64_t y) {
      if (upper && y < x) std::swap(x, y);
      if (x >= lo && x < hi) ++cur[x];
      if (!upper && y >= lo && y < hi) ++cur[y];
    });
  });
  out.loops = loops.load();
  out.indptr.resize(static_cast<size_t>(n) + 1);
  exclusive_scan(cursor.data(), n, out.indptr.data(), par);
  const int64_t* ptr = out.indptr.data();
  par.for_chunks(n, int64_t{1} << 18, [&](int64_t b, int64_t e) {
    std::memcpy(cursor.data() + b, ptr + b, static_cast<size_t>(e - b) * 8);
  });
  out.indices.resize(static_cast<size_t>(ptr[n]));
  int32_t* idx = out.indices.data();
  const std::vector<int64_t> first = rows_by_entries(ptr, n, par.threads());  // even writes
  loops.store(0);
  par.for_threads([&](int t) {
    const int64_t lo = first[static_cast<size_t>(t)], hi = first[static_cast<size_t>(t) + 1];
    each_pair(lo, hi, false, [&](int64_t x, int64_t y) {
      if (upper && y < x) std::swap(x, y);
      if (x >= lo && x < hi) idx[cur[x]++] = static_cast<int32_t>(y);
      if (!upper && y >= lo && y < hi) idx[cur[y]++] = static_cast<int32_t>(x);
    });
  });
  // each row sorted (unless it is) and its repeats dropped; cursor[r] = what it keeps
  std::atomic<int64_t> kept{0};
  par.for_chunks(n, kRowGrain, [&](int64_t b, int64_t e) {
    int64_t k = 0;
    for (int64_t r = b; r < e; ++r) {
      int32_t* s = idx + ptr[r];
      int32_t* t = idx + ptr[r + 1];
      if (!std::is_sorted(s, t)) std::sort(s, t);
      cur[r] = std::unique(s, t) - s;
      k += cur[r];
    }
    kept.fetch_add(k);
  });
  out.duplicates = (count - out.loops) - (upper ? kept.load() : kept.load() / 2);
  if (kept.load() != ptr[n]) compact_rows(out.indptr, out.indices, cursor.data(), n, par);
  return out;
}

}  // namespace

template <typename Id>
Csr build_csr(const Id* u, const Id* v, int64_t stride, int64_t count, int64_t n, Parallel& par) {
  return build_rows(u, v, stride, count, n, /*upper=*/false, par);
}

template Csr build_csr<int64_t>(const int64_t*, const int64_t*, int64_t, int64_t, int64_t, Parallel&);
template Csr build_csr<int32_t>(const int32_t*, const int32_t*, int64_t, int64_t, int64_t, Parallel&);

namespace {

/// fn(u, x) for each entry x of the upper rows (up, ui) with lo <= x < hi, by
/// increasing u: only rows u < hi can hold one, and in a sorted row they are one span,
/// found by a binary search. So a thread that owns rows [lo, hi) reads about its own
/// entries and one search per row, not every entry.
template <typename F>
void upper_entries_in(const int64_t* up, const int32_t* ui, int64_t lo, int64_t hi,
                      const Parallel& par, F&& fn) {
  for (int64_t u = 0; u < hi; ++u) {
    const int32_t* s = ui + up[u];
    const int32_t* e = ui + up[u + 1];
    if (s == e || e[-1] < lo) continue;
    if (*s < lo) s = std::lower_bound(s, e, static_cast<int32_t>(lo));
    for (; s < e && *s < hi; ++s) fn(u, *s);
    if ((u & 0xFFFF) == 0 && par.stopping()) return;
  }
}

}  // namespace

InPlaceCsr build_csr_in_place(int32_t* pairs, int64_t count, int64_t n, Parallel& par) {
  // Stage 1: the upper rows (row min(a, c) holds max(a, c)), sorted and unique.
  Csr upper = build_rows(pairs, pairs + 1, 2, count, n, /*upper=*/true, par);
  const int64_t* up = upper.indptr.data();
  const int32_t* ui = upper.indices.data();
  // Stage 2, into the pairs' memory (2 * count slots, no longer needed): row x is the
  // rows u < x that hold x, in increasing u, then upper row x itself. Sorted and
  // unique without a sort.
  InPlaceCsr out;
  out.loops = upper.loops;
  out.duplicates = upper.duplicates;
  OwnedArray<int64_t> cursor(static_cast<size_t>(n) + 1);
  int64_t* cur = cursor.data();
  fill<int64_t>(cur, n + 1, 0, par);
  par.for_threads([&](int t) {
    auto [lo, hi] = par.share(n, t);
    for (int64_t x = lo; x < hi; ++x) cur[x] += up[x + 1] - up[x];
    upper_entries_in(up, ui, lo, hi, par, [cur](int64_t, int32_t x) { ++cur[x]; });
  });
  out.indptr.resize(static_cast<size_t>(n) + 1);
  exclusive_scan(cur, n, out.indptr.data(), par);
  const int64_t* ptr = out.indptr.data();
  par.for_chunks(n, int64_t{1} << 18, [&](int64_t b, int64_t e) {
    std::memcpy(cur + b, ptr + b, static_cast<size_t>(e - b) * 8);
  });
  const std::vector<int64_t> first = rows_by_entries(ptr, n, par.threads());
  par.for_threads([&](int t) {
    const int64_t lo = first[static_cast<size_t>(t)], hi = first[static_cast<size_t>(t) + 1];
    for (int64_t x = lo; x < hi; ++x) {  // upper row x at the end of row x
      const int64_t len = up[x + 1] - up[x];
      std::memcpy(pairs + ptr[x + 1] - len, ui + up[x], static_cast<size_t>(len) * 4);
    }
    upper_entries_in(up, ui, lo, hi, par, [cur, pairs](int64_t u, int32_t x) {
      pairs[cur[x]++] = static_cast<int32_t>(u);
    });
  });
  return out;
}

namespace {

/// A round whose frontier has fewer entries plus neighbour entries than this runs on
/// the calling thread (starting the threads costs about as much).
constexpr int64_t kPeelSerialWork = int64_t{1} << 15;
/// Entries of `rest` per chunk of a level scan.
constexpr int64_t kScanGrain = int64_t{1} << 16;

/// Vertices one thread appends to, on a cache line of their own: threads append to
/// neighbouring parts at once, and a shared line would pass between their cores.
struct alignas(64) Part {
  std::vector<int32_t> ids;
};

/// Level-synchronous peeling (as in ParK and PKC): for each level k, rounds place
/// every remaining vertex whose remaining degree is at most k and take one from
/// the degree of each neighbour still above k; a neighbour that drops to k joins
/// the next round. A round is a set, placed in increasing id: the same arrays for
/// any number of threads. A vertex placed at level k had at most k remaining
/// neighbours, so at most core[v] = k come after it.
class Peeler {
 public:
  Peeler(const int64_t* indptr, const int32_t* indices, int64_t n, int32_t* order, int32_t* core,
         Parallel& par)
      : indptr_(indptr), indices_(indices), n_(n), order_(order), core_(core), par_(par),
        deg_(static_cast<size_t>(n)), rest_(static_cast<size_t>(n)),
        found_(static_cast<size_t>(par.threads())) {}

  void run() {
    par_.for_chunks(n_, int64_t{1} << 18, [&](int64_t b, int64_t e) {
      for (int64_t v = b; v < e; ++v) {
        deg_[v] = static_cast<int32_t>(indptr_[v + 1] - indptr_[v]);
        rest_[v] = static_cast<int32_t>(v);
      }
    });
    while (placed_ < n_) {
      if (frontier_.empty()) start_level();
      round();
    }
  }

 private:
  static constexpr int32_t kPlaced = INT32_MIN;  // the degree of a placed vertex

  static int64_t chunks(int64_t size) { return (size + kScanGrain - 1) / kScanGrain; }

  /// Counts entries read on the calling thread; asks for Ctrl-C every few milliseconds.
  void done(int64_t entries) {
    unchecked_ += entries;
    if (unchecked_ > (int64_t{1} << 22)) {
      unchecked_ = 0;
      par_.check();
    }
  }

  /// The next level: k = the smallest remaining degree (above the last k), the
  /// frontier = the remaining vertices of degree k, by id. `rest_` drops the placed
  /// vertices once they are a quarter of it. Two passes over `rest_`.
  void start_level() {
    const int64_t size = static_cast<int64_t>(rest_.size());
    const size_t nc = static_cast<size_t>(chunks(size));
    std::vector<int32_t> lows(nc, INT32_MAX);
    std::vector<int64_t> at(nc + 1, 0);  // remaining vertices per chunk, then where they go
    par_.for_chunks(size, kScanGrain, [&](int64_t b, int64_t e) {
      int32_t low = INT32_MAX;
      int64_t left = 0;
      for (int64_t i = b; i < e; ++i) {
        const int32_t d = deg_[rest_[i]];
        if (d != kPlaced) {
          low = std::min(low, d);
          ++left;
        }
      }
      lows[static_cast<size_t>(b / kScanGrain)] = low;
      at[static_cast<size_t>(b / kScanGrain) + 1] = left;
    });
    k_ = std::max(k_, *std::min_element(lows.begin(), lows.end()));
    for (size_t c = 0; c < nc; ++c) at[c + 1] += at[c];
    const bool compact = at[nc] * 4 < size * 3;
    std::vector<int32_t> kept(compact ? static_cast<size_t>(at[nc]) : 0);
    std::vector<Part> parts(nc);
    par_.for_chunks(size, kScanGrain, [&](int64_t b, int64_t e) {
      auto& part = parts[static_cast<size_t>(b / kScanGrain)].ids;
      int64_t p = at[static_cast<size_t>(b / kScanGrain)];
      for (int64_t i = b; i < e; ++i) {
        const int32_t v = rest_[i];
        if (deg_[v] == kPlaced) continue;
        if (compact) kept[static_cast<size_t>(p++)] = v;
        if (deg_[v] <= k_) part.push_back(v);
      }
    });
    if (compact) rest_ = std::move(kept);
    frontier_ = concat(parts);
    done(size);
  }

  /// The remaining vertices of degree <= k, by id (a pass over `rest_`).
  std::vector<int32_t> scan_frontier() {
    const int64_t size = static_cast<int64_t>(rest_.size());
    std::vector<Part> parts(static_cast<size_t>(chunks(size)));
    par_.for_chunks(size, kScanGrain, [&](int64_t b, int64_t e) {
      auto& part = parts[static_cast<size_t>(b / kScanGrain)].ids;
      for (int64_t i = b; i < e; ++i) {
        const int32_t d = deg_[rest_[i]];
        if (d != kPlaced && d <= k_) part.push_back(rest_[i]);
      }
    });
    return concat(parts);
  }

  static std::vector<int32_t> concat(const std::vector<Part>& parts) {
    size_t total = 0;
    for (const auto& part : parts) total += part.ids.size();
    std::vector<int32_t> out;
    out.reserve(total);
    for (const auto& part : parts) out.insert(out.end(), part.ids.begin(), part.ids.end());
    return out;
  }

  /// Places the frontier (the next ranks, core k) and takes one from the degree of
  /// each neighbour above k; the next frontier is those that dropped to k, by id.
  void round() {
    const int64_t f = static_cast<int64_t>(frontier_.size());
    int64_t work = f;
    for (int64_t i = 0; i < f && work < kPeelSerialWork; ++i)
      work += indptr_[frontier_[i] + 1] - indptr_[frontier_[i]];
    std::vector<int32_t> next;
    if (work < kPeelSerialWork || par_.threads() == 1) {
      for (int64_t b = 0; b < f; b += 4096)
        done(peel</*kShared=*/false>(b, std::min(f, b + 4096), next));
    } else {
      for (auto& found : found_) found.ids.clear();
      const int64_t grain = std::clamp<int64_t>(f / (8 * par_.threads()), 1, 1024);
      std::atomic<int64_t> at{0};
      par_.for_threads([&](int t) {
        for (;;) {
          const int64_t b = at.fetch_add(grain, std::memory_order_relaxed);
          if (b >= f || par_.stopping()) return;
          peel</*kShared=*/true>(b, std::min(f, b + grain), found_[static_cast<size_t>(t)].ids);
        }
      });
      next = concat(found_);
    }
    placed_ += f;
    if (static_cast<int64_t>(next.size()) * 16 > static_cast<int64_t>(rest_.size())) {
      frontier_ = scan_frontier();  // the same vertices, in id order without a sort
      done(static_cast<int64_t>(rest_.size()));
    } else {
      std::sort(next.begin(), next.end());
      frontier_ = std::move(next);
    }
  }

  /// Frontier entries [b, e): placed, their neighbours' degrees above k taken one
  /// from; those that drop from k + 1 to k go to `next`. With kShared, other threads
  /// peel other entries of the same frontier at once. Returns the entries it read.
  template <bool kShared>
  int64_t peel(int64_t b, int64_t e, std::vector<int32_t>& next) {
    const int32_t k = k_;
    int64_t read = e - b;
    for (int64_t i = b; i < e; ++i) {
      const int32_t v = frontier_[static_cast<size_t>(i)];
      read += indptr_[v + 1] - indptr_[v];
      order_[placed_ + i] = v;
      core_[v] = k;
      // a frontier vertex's degree is <= k before and kPlaced after: never taken from
      if (kShared)
        __atomic_store_n(&deg_[v], kPlaced, __ATOMIC_RELAXED);
      else
        deg_[v] = kPlaced;
      for (int64_t j = indptr_[v]; j < indptr_[v + 1]; ++j) {
        int32_t* du = &deg_[static_cast<size_t>(indices_[j])];
        if (kShared) {
          if (__atomic_load_n(du, __ATOMIC_RELAXED) > k &&
              __atomic_fetch_sub(du, 1, __ATOMIC_RELAXED) == k + 1)
            next.push_back(indices_[j]);
        } else if (*du > k && (*du)-- == k + 1) {
          next.push_back(indices_[j]);
        }
      }
    }
    return read;
  }

  const int64_t* indptr_;
  const int32_t* indices_;
  int64_t n_;
  int32_t* order_;
  int32_t* core_;
  Parallel& par_;
  std::vector<int32_t> deg_;       // remaining degree; kPlaced once placed
  std::vector<int32_t> rest_;      // the remaining vertices and some placed ones, by id
  std::vector<int32_t> frontier_;  // this round's vertices, by id
  std::vector<Part> found_;        // each thread's part of the next frontier
  int64_t placed_ = 0;
  int32_t k_ = 0;
  int64_t unchecked_ = 0;  // entries read since the last check for Ctrl-C
};

}  // namespace

void degeneracy_order(const int64_t* indptr, const int32_t* indices, int64_t n, int32_t* order,
                      int32_t* core, Parallel& par) {
  Peeler(indptr, indices, n, order, core, par).run();
}

/// Rows of a new CSR: count_rows(b, e, count) sets the sizes of the rows its range
/// [b, e) of the input decides, fill_rows(b, e, ptr, idx) writes them.
template <typename Count, typename Fill>
Csr new_rows(int64_t n, Count count_rows, Fill fill_rows, Parallel& par) {
  Csr out;
  OwnedArray<int64_t> count(static_cast<size_t>(n));
  par.for_chunks(n, kRowGrain, [&](int64_t b, int64_t e) { count_rows(b, e, count.data()); });
  out.indptr.resize(static_cast<size_t>(n) + 1);
  exclusive_scan(count.data(), n, out.indptr.data(), par);
  out.indices.resize(static_cast<size_t>(out.indptr[static_cast<size_t>(n)]));
  const int64_t* ptr = out.indptr.data();
  int32_t* idx = out.indices.data();
  par.for_chunks(n, kRowGrain, [&](int64_t b, int64_t e) { fill_rows(b, e, ptr, idx); });
  return out;
}

Csr orient(const int64_t* indptr, const int32_t* indices, int64_t n, const int32_t* rank,
           bool renumber, Parallel& par) {
  auto count_rows = [&](int64_t b, int64_t e, int64_t* count) {
    for (int64_t v = b; v < e; ++v) {
      int64_t c = 0;
      for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) c += rank[indices[k]] > rank[v];
      count[renumber ? rank[v] : v] = c;
    }
  };
  auto fill_rows = [&](int64_t b, int64_t e, const int64_t* ptr, int32_t* idx) {
    for (int64_t v = b; v < e; ++v) {
      const int64_t row = renumber ? rank[v] : v;
      int64_t p = ptr[row];
      for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
        const int32_t u = indices[k];
        if (rank[u] > rank[v]) idx[p++] = renumber ? rank[u] : u;
      }
      if (renumber) std::sort(idx + ptr[row], idx + p);
    }
  };
  return new_rows(n, count_rows, fill_rows, par);
}

Csr permute(const int64_t* indptr, const int32_t* indices, int64_t n, const int64_t* order,
            const int64_t* inv, Parallel& par) {
  auto count_rows = [&](int64_t b, int64_t e, int64_t* count) {
    for (int64_t i = b; i < e; ++i) count[i] = indptr[order[i] + 1] - indptr[order[i]];
  };
  auto fill_rows = [&](int64_t b, int64_t e, const int64_t* ptr, int32_t* idx) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t v = order[i];
      int32_t* row = idx + ptr[i];
      for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k)
        row[k - indptr[v]] = static_cast<int32_t>(inv[indices[k]]);
      std::sort(row, idx + ptr[i + 1]);
    }
  };
  return new_rows(n, count_rows, fill_rows, par);
}

/// Each thread owns a range of targets and reads every row in order, calling
/// visit(u, v, j) for the entries j (of source v) whose target u is its own.
template <typename Visit>
void visit_owned_targets(const int64_t* indptr, const int32_t* indices, int64_t n, Visit visit,
                         Parallel& par) {
  par.for_threads([&](int t) {
    auto [lo, hi] = par.share(n, t);
    for (int64_t v = 0; v < n; ++v) {
      for (int64_t j = indptr[v]; j < indptr[v + 1]; ++j)
        if (indices[j] >= lo && indices[j] < hi) visit(static_cast<int64_t>(indices[j]), v, j);
      if ((v & 0xFFFF) == 0 && par.stopping()) return;
    }
  });
}

InRows in_rows(const int64_t* indptr, const int32_t* indices, int64_t n, Parallel& par) {
  // sources come out increasing, with no atomics and no sort
  InRows out;
  out.in_ptr.resize(static_cast<size_t>(n) + 1);
  out.after.resize(static_cast<size_t>(n));
  OwnedArray<int64_t> cursor(static_cast<size_t>(n) + 1);
  fill<int64_t>(cursor.data(), n + 1, 0, par);
  fill<int64_t>(out.after.data(), n, 0, par);
  visit_owned_targets(indptr, indices, n, [&](int64_t u, int64_t v, int64_t j) {
    ++cursor[static_cast<size_t>(u)];
    out.after[static_cast<size_t>(u)] += indptr[v + 1] - j - 1;
  }, par);
  exclusive_scan(cursor.data(), n, out.in_ptr.data(), par);
  const int64_t* ptr = out.in_ptr.data();
  const int64_t m = ptr[n];
  par.for_chunks(n, int64_t{1} << 18, [&](int64_t b, int64_t e) {
    std::memcpy(cursor.data() + b, ptr + b, static_cast<size_t>(e - b) * 8);
  });
  out.in_src.resize(static_cast<size_t>(m));
  out.in_pos.resize(static_cast<size_t>(m));
  visit_owned_targets(indptr, indices, n, [&](int64_t u, int64_t v, int64_t j) {
    const int64_t k = cursor[static_cast<size_t>(u)]++;
    out.in_src[static_cast<size_t>(k)] = static_cast<int32_t>(v);
    out.in_pos[static_cast<size_t>(k)] = static_cast<int32_t>(j - indptr[v]);
  }, par);
  return out;
}

std::string check_rows(const int64_t* indptr, int64_t n, const int32_t* indices,
                       int64_t num_indices, Parallel& par) {
  if (indptr[0] != 0) return "indptr does not start at 0";
  if (indptr[n] != num_indices)
    return "indptr ends at " + std::to_string(indptr[n]) + ", not at the " +
           std::to_string(num_indices) + " neighbour entries";
  std::atomic<int64_t> first_bad{INT64_MAX};  // 4 * row + reason: the first bad row wins
  par.for_chunks(n, kRowGrain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      if (4 * r >= first_bad.load(std::memory_order_relaxed)) return;
      int reason = 0;
      const int64_t s = indptr[r], t = indptr[r + 1];
      if (t < s || s < 0 || t > num_indices) {
        reason = 1;
      } else {
        for (int64_t k = s; k < t && !reason; ++k) {
          if (indices[k] < 0 || indices[k] >= n) reason = 2;
          else if (k > s && indices[k] <= indices[k - 1]) reason = 3;
        }
      }
      if (reason) {
        const int64_t mine = 4 * r + reason;
        int64_t cur = first_bad.load();
        while (mine < cur && !first_bad.compare_exchange_weak(cur, mine)) {
        }
        return;
      }
    }
  });
  const int64_t bad = first_bad.load();
  if (bad == INT64_MAX) return "";
  const char* what[] = {"", "indptr is not monotone", "a neighbour id is out of range",
                        "the neighbours are not strictly increasing"};
  return std::string(what[bad % 4]) + " at row " + std::to_string(bad / 4);
}

}  // namespace gthinker
