#include "graph_generate.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace gthinker {

namespace {

constexpr int64_t kItemGrain = 1 << 15;  // pairs, ranks or closures per chunk
constexpr int64_t kRowGrain = 4096;      // rows per chunk (dynamic: hub rows balance)
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
constexpr int kBucketBits = 16;          // top bits of a hash that pick its bucket

/// expm1(a y) / a, which tends to y as a tends to 0.
inline double phi(double a, double y) {
  const double ay = a * y;
  return std::fabs(ay) < 1e-9 ? y * (1.0 + 0.5 * ay) : std::expm1(ay) / a;
}

/// log1p(a z) / a, which tends to z as a tends to 0 (the inverse of phi in y).
inline double psi(double a, double z) {
  const double az = a * z;
  return std::fabs(az) < 1e-9 ? z * (1.0 - 0.5 * az) : std::log1p(az) / a;
}

inline int64_t clamp_rank(double s, int64_t count) {
  const double r = std::floor(s * static_cast<double>(count));
  if (!(r >= 0.0)) return 0;  // NaN too
  return r >= static_cast<double>(count) ? count - 1 : static_cast<int64_t>(r);
}

inline int32_t side_id(const GraphSide& side, const Scatter& scatter, int64_t rank) {
  return static_cast<int32_t>(side.offset + static_cast<int64_t>(scatter(static_cast<uint64_t>(rank))));
}

inline int32_t draw_id(const GraphSide& side, const Scatter& scatter, CounterRng& rng) {
  return side_id(side, scatter, side.hubs + side.curve.draw(rng.positive()));
}

inline uint64_t edge_hash(int64_t u, int64_t v, uint64_t key) {
  return mix64(((static_cast<uint64_t>(u) << 32) | static_cast<uint64_t>(v)) ^ key);
}

/// Whether sorted row [p, e) holds v, advancing p past the entries below v.
inline bool holds(const int32_t*& p, const int32_t* e, int32_t v) {
  while (p < e && *p < v) ++p;
  return p < e && *p == v;
}

/// Calls fn(u, v) for every edge u < v of candidate row u that is not in base row u.
template <typename F>
inline void for_new_in_row(const int64_t* ci, const int32_t* cx, const int64_t* bi, const int32_t* bx,
                           int64_t u, F&& fn) {
  const int32_t* c = std::upper_bound(cx + ci[u], cx + ci[u + 1], static_cast<int32_t>(u));
  const int32_t* ce = cx + ci[u + 1];
  const int32_t* b = bi ? bx + bi[u] : nullptr;
  const int32_t* be = bi ? bx + bi[u + 1] : nullptr;
  for (; c < ce; ++c)
    if (!b || !holds(b, be, *c)) fn(u, *c);
}

/// out[0] = 0, out[i + 1] = out[i] + in[i].
void prefix_sums(const int64_t* in, int64_t n, int64_t* out) {
  out[0] = 0;
  for (int64_t i = 0; i < n; ++i) out[i + 1] = out[i] + in[i];
}

/// The k-th smallest (1 <= k <= their number) of the codes that visit(b, e, emit)
/// emits for the items of [b, e) (each thread visits its share of [0, n)): a
/// histogram of the codes' top bits finds the bucket of the k-th, whose codes alone
/// are then ordered.
template <typename Visit>
uint64_t kth_smallest(int64_t n, int64_t k, const Visit& visit, Parallel& par) {
  const int T = par.threads();
  const size_t buckets = size_t{1} << kBucketBits;
  std::vector<std::vector<int64_t>> hist(static_cast<size_t>(T), std::vector<int64_t>(buckets, 0));
  par.for_threads([&](int t) {
    auto [b, e] = par.share(n, t);
    auto& h = hist[static_cast<size_t>(t)];
    visit(b, e, [&](uint64_t code) { ++h[code >> (64 - kBucketBits)]; });
  });
  int64_t before = 0;
  size_t bucket = 0;
  for (; bucket < buckets; ++bucket) {
    int64_t in = 0;
    for (int t = 0; t < T; ++t) in += hist[static_cast<size_t>(t)][bucket];
    if (before + in >= k) break;
    before += in;
  }
  std::vector<std::vector<uint64_t>> found(static_cast<size_t>(T));
  par.for_threads([&](int t) {
    auto [b, e] = par.share(n, t);
    visit(b, e, [&](uint64_t code) {
      if ((code >> (64 - kBucketBits)) == bucket) found[static_cast<size_t>(t)].push_back(code);
    });
  });
  std::vector<uint64_t> all;
  for (auto& f : found) all.insert(all.end(), f.begin(), f.end());
  const auto at = static_cast<size_t>(k - before - 1);  // 0-based rank in the bucket
  std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(at), all.end());
  return all[at];
}

/// A weight key (log(u) / w <= 0, or -inf) as a code that orders the other way: the
/// larger the key, the smaller its code (a non-positive double's bits without the sign).
inline uint64_t key_code(double key) {
  uint64_t bits;
  std::memcpy(&bits, &key, sizeof bits);
  return bits & ~(uint64_t{1} << 63);
}

}  // namespace

uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

CounterRng::CounterRng(uint64_t seed, uint64_t stream, uint64_t index)
    : state_(mix64(mix64(seed + kGolden) ^ mix64(stream * 0xD1B54A32D192ED03ULL + index))) {}

uint64_t CounterRng::next() {
  state_ += kGolden;
  return mix64(state_);
}

double CounterRng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double CounterRng::positive() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

uint64_t CounterRng::below(uint64_t n) {
  // Lemire's multiply-shift; the bias (n / 2^64) is far below anything measured here.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
}

Scatter::Scatter(uint64_t size, uint64_t key) : size_(size), key_(mix64(key ^ 0x5CA77E5ULL)) {
  int bits = 0;
  while (bits < 62 && (uint64_t{1} << bits) < size) ++bits;
  low_bits_ = bits / 2;
  low_mask_ = (uint64_t{1} << low_bits_) - 1;
  high_mask_ = (uint64_t{1} << (bits - low_bits_)) - 1;
}

uint64_t Scatter::operator()(uint64_t x) const {
  if (size_ <= 1) return x;
  do {
    uint64_t high = x >> low_bits_, low = x & low_mask_;
    for (uint64_t round = 0; round < 4; ++round) {
      const uint64_t k = key_ ^ (round * kGolden);
      high ^= mix64(low ^ k) & high_mask_;
      low ^= mix64(high ^ ~k) & low_mask_;
    }
    x = (high << low_bits_) | low;
  } while (x >= size_);
  return x;
}

WeightCurve::WeightCurve(int64_t count, double lo, double hi, double gamma)
    : count_(count), span_(std::log(hi / lo)), a_(gamma - 1.0), b_(gamma - 2.0) {
  if (!(span_ > 0.0)) span_ = 0.0;
  plain_ = phi(a_, span_);
  biased_ = phi(b_, span_);
}

int64_t WeightCurve::draw(double u) const {
  if (span_ == 0.0) return clamp_rank(1.0 - u, count_);
  // u: the size-biased law's tail above x = hi * exp(-z); then the plain law's tail there.
  const double z = psi(b_, u * biased_);
  return clamp_rank(phi(a_, z) / plain_, count_);
}

double WeightCurve::tail_sb(int64_t q) const {
  const double s = static_cast<double>(q) / static_cast<double>(count_);
  return phi(b_, psi(a_, s * plain_)) / biased_;
}

double WeightCurve::share(int64_t r) const {
  if (span_ == 0.0) return 1.0 / static_cast<double>(count_);
  return tail_sb(r + 1) - tail_sb(r);
}

void draw_pairs(const GraphSide& a, const GraphSide& b, uint64_t seed, uint64_t stream,
                int64_t first, int64_t count, int32_t* out, Parallel& par) {
  const Scatter sa(static_cast<uint64_t>(a.size), a.scatter_key);
  const Scatter sb(static_cast<uint64_t>(b.size), b.scatter_key);
  par.for_chunks(count, kItemGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      CounterRng rng(seed, stream, static_cast<uint64_t>(first + i));
      out[2 * i] = draw_id(a, sa, rng);
      out[2 * i + 1] = draw_id(b, sb, rng);
    }
  });
}

OwnedArray<int32_t> hub_neighbours(const GraphSide& side, int64_t degree, uint64_t seed,
                                   uint64_t stream, Parallel& par) {
  const int64_t count = side.curve.count();
  if (degree < 0 || degree > count)
    throw std::invalid_argument("a hub's degree must be at most the number of non-hub vertices");
  if (degree == 0) return OwnedArray<int32_t>();
  std::vector<uint64_t> code(static_cast<size_t>(count));
  par.for_chunks(count, kItemGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      CounterRng rng(seed, stream, static_cast<uint64_t>(c));
      const double w = side.curve.share(c);
      code[static_cast<size_t>(c)] = key_code(w > 0.0 ? std::log(rng.positive()) / w : -HUGE_VAL);
    }
  });
  par.check();
  const uint64_t limit = kth_smallest(count, degree, [&](int64_t b, int64_t e, auto&& emit) {
    for (int64_t c = b; c < e; ++c) emit(code[static_cast<size_t>(c)]);
  }, par);
  // Every rank below the limit, then those at it by rank until the degree is reached.
  const Scatter scatter(static_cast<uint64_t>(side.size), side.scatter_key);
  std::vector<uint8_t> chosen(static_cast<size_t>(side.size), 0);
  std::atomic<int64_t> below{0};
  par.for_chunks(count, kItemGrain, [&](int64_t lo, int64_t hi) {
    int64_t k = 0;
    for (int64_t c = lo; c < hi; ++c)
      if (code[static_cast<size_t>(c)] < limit) {
        chosen[scatter(static_cast<uint64_t>(side.hubs + c))] = 1;
        ++k;
      }
    below += k;
  });
  for (int64_t c = 0, ties = degree - below.load(); c < count && ties > 0; ++c)
    if (code[static_cast<size_t>(c)] == limit) {
      chosen[scatter(static_cast<uint64_t>(side.hubs + c))] = 1;
      --ties;
    }
  OwnedArray<int32_t> ids(static_cast<size_t>(degree));
  size_t k = 0;
  for (int64_t i = 0; i < side.size; ++i)
    if (chosen[static_cast<size_t>(i)]) ids[k++] = static_cast<int32_t>(side.offset + i);
  return ids;
}

void anchor_pairs(const GraphSide& side, const GraphSide& other, const uint8_t* skip,
                  uint64_t seed, uint64_t stream, int32_t* out, Parallel& par) {
  const Scatter own(static_cast<uint64_t>(side.size), side.scatter_key);
  const Scatter partner(static_cast<uint64_t>(other.size), other.scatter_key);
  par.for_chunks(side.curve.count(), kItemGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      const int32_t id = side_id(side, own, side.hubs + c);
      if (skip != nullptr && skip[id - side.offset]) {
        out[2 * c] = out[2 * c + 1] = -1;
        continue;
      }
      CounterRng rng(seed, stream, static_cast<uint64_t>(c));
      out[2 * c] = id;
      out[2 * c + 1] = draw_id(other, partner, rng);
    }
  });
}

void closure_pairs(const int64_t* indptr, const int32_t* indices, const int32_t* centers,
                   int64_t num_centers, const uint8_t* barred, int group, uint64_t seed,
                   uint64_t stream, int64_t first, int64_t count, int32_t* out, Parallel& par) {
  if (group < 2 || group > 16) throw std::invalid_argument("closure group must be in 2..16");
  if (num_centers < 1) throw std::invalid_argument("no vertex to close a neighbourhood at");
  const int64_t per = int64_t{group} * (group - 1) / 2;
  par.for_chunks(count, kItemGrain / per + 1, [&](int64_t lo, int64_t hi) {
    int32_t chosen[16];
    for (int64_t i = lo; i < hi; ++i) {
      CounterRng rng(seed, stream, static_cast<uint64_t>(first + i));
      const int32_t c = centers[rng.below(static_cast<uint64_t>(num_centers))];
      const int32_t* row = indices + indptr[c];
      const auto deg = static_cast<uint64_t>(indptr[c + 1] - indptr[c]);
      int got = 0;
      for (int tries = 0; deg > 0 && got < group && tries < 4 * group + 8; ++tries) {
        const int32_t v = row[rng.below(deg)];
        if (barred != nullptr && barred[v]) continue;
        if (std::find(chosen, chosen + got, v) == chosen + got) chosen[got++] = v;
      }
      int32_t* o = out + 2 * per * i;
      int64_t k = 0;
      for (int x = 0; x < got; ++x)
        for (int y = x + 1; y < got; ++y, ++k) {
          o[2 * k] = chosen[x];
          o[2 * k + 1] = chosen[y];
        }
      for (; k < per; ++k) o[2 * k] = o[2 * k + 1] = c;
    }
  });
}

OwnedArray<int32_t> new_edges(const int64_t* ci, const int32_t* cx, int64_t n, const int64_t* bi,
                              const int32_t* bx, uint64_t key, int64_t need, int64_t* available,
                              Parallel& par) {
  std::vector<int64_t> per_row(static_cast<size_t>(n));
  par.for_chunks(n, kRowGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t u = lo; u < hi; ++u) {
      int64_t k = 0;
      for_new_in_row(ci, cx, bi, bx, u, [&](int64_t, int32_t) { ++k; });
      per_row[static_cast<size_t>(u)] = k;
    }
  });
  std::vector<int64_t> start(static_cast<size_t>(n) + 1);
  prefix_sums(per_row.data(), n, start.data());
  *available = start[static_cast<size_t>(n)];
  const bool all = need >= *available;
  auto hashes = [&](int64_t b, int64_t e, auto&& emit) {
    for (int64_t u = b; u < e; ++u)
      for_new_in_row(ci, cx, bi, bx, u, [&](int64_t x, int32_t y) { emit(edge_hash(x, y, key)); });
  };
  const uint64_t limit = all || need <= 0 ? 0 : kth_smallest(n, need, hashes, par);
  auto kept = [&](int64_t u, int32_t v) { return all || (need > 0 && edge_hash(u, v, key) <= limit); };
  if (!all) {
    par.for_chunks(n, kRowGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t u = lo; u < hi; ++u) {
        int64_t k = 0;
        for_new_in_row(ci, cx, bi, bx, u, [&](int64_t x, int32_t y) { k += kept(x, y); });
        per_row[static_cast<size_t>(u)] = k;
      }
    });
    prefix_sums(per_row.data(), n, start.data());
  }
  OwnedArray<int32_t> out(static_cast<size_t>(2 * start[static_cast<size_t>(n)]));
  par.for_chunks(n, kRowGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t u = lo; u < hi; ++u) {
      int32_t* o = out.data() + 2 * start[static_cast<size_t>(u)];
      for_new_in_row(ci, cx, bi, bx, u, [&](int64_t x, int32_t y) {
        if (kept(x, y)) {
          *o++ = static_cast<int32_t>(x);
          *o++ = y;
        }
      });
    }
  });
  return out;
}

}  // namespace gthinker
