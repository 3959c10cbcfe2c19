// Kernels of the seeded graph generators (gthinker/graphs/generate.py): endpoint
// pairs drawn from power-law weight curves (Chung-Lu), hubs with an exact degree,
// one anchor edge per vertex, closures of random neighbourhoods, and the choice of
// the new edges among candidates. Every random number comes from a counter-based
// generator keyed by (seed, stream, index), so each kernel gives the same arrays
// whatever the number of threads.
#pragma once

#include <cstdint>

#include "owned_array.hpp"
#include "parallel.hpp"

namespace gthinker {

/// SplitMix64's finaliser: a bijection of 64-bit words that mixes every bit.
uint64_t mix64(uint64_t x);

/// Random numbers for one item of one stream: the same (seed, stream, index)
/// gives the same sequence on any thread.
class CounterRng {
 public:
  CounterRng(uint64_t seed, uint64_t stream, uint64_t index);
  uint64_t next();
  /// Uniform in [0, 1) (53 bits).
  double uniform();
  /// Uniform in (0, 1].
  double positive();
  /// Uniform in [0, n), n >= 1.
  uint64_t below(uint64_t n);

 private:
  uint64_t state_;
};

/// A keyed pseudo-random bijection of [0, size): four rounds of a Feistel network
/// with unbalanced halves on the smallest number of bits that holds size (each
/// round xors one half with a keyed hash of the other), walked until it lands in
/// range (fewer than two steps on average). Turns ranks (0: the heaviest vertex)
/// into scattered vertex ids without a table.
class Scatter {
 public:
  Scatter(uint64_t size, uint64_t key);
  uint64_t operator()(uint64_t x) const;

 private:
  uint64_t size_;
  uint64_t key_;
  int low_bits_ = 0;
  uint64_t low_mask_ = 0;
  uint64_t high_mask_ = 0;
};

/// A truncated power law (density proportional to x^-gamma on [lo, hi]) spread
/// over `count` ranks from the top: rank r stands for the r-th of `count` slices of
/// equal probability, and is drawn with probability proportional to the mean of x
/// over its slice (the slice's share of the size-biased law).
class WeightCurve {
 public:
  WeightCurve() = default;
  WeightCurve(int64_t count, double lo, double hi, double gamma);

  int64_t count() const { return count_; }
  /// The rank of one draw from uniform u in (0, 1].
  int64_t draw(double u) const;
  /// The probability that a draw gives rank r.
  double share(int64_t r) const;

 private:
  /// The size-biased law's tail at the top of rank slice q (the probability of the ranks below q).
  double tail_sb(int64_t q) const;

  int64_t count_ = 0;
  double span_ = 0;    // log(hi / lo); 0: a flat curve
  double a_ = 0;       // gamma - 1: the plain law's tails are phi(a, z) / phi(a, span)
  double b_ = 0;       // gamma - 2: the size-biased law's
  double plain_ = 1;   // phi(a, span)
  double biased_ = 1;  // phi(b, span)
};

/// One side of a generated graph: `size` vertices, the first `hubs` ranks the
/// hubs, the others drawn from `curve` (curve rank c is vertex rank hubs + c);
/// vertex rank r has id offset + scatter(r), scatter keyed by scatter_key.
struct GraphSide {
  WeightCurve curve;
  int64_t hubs = 0;
  int64_t size = 0;
  int64_t offset = 0;
  uint64_t scatter_key = 0;
};

/// Pairs k in [first, first + count): out[2i] from side a's curve, out[2i + 1]
/// from side b's (ids), i = k - first; stream `stream` of `seed`.
void draw_pairs(const GraphSide& a, const GraphSide& b, uint64_t seed, uint64_t stream,
                int64_t first, int64_t count, int32_t* out, Parallel& par);

/// The ids of `degree` distinct non-hub vertices of `side`, drawn in proportion
/// to their weights without replacement (Efraimidis and Spirakis' keys
/// u^(1 / weight), the largest kept), in increasing order of id.
OwnedArray<int32_t> hub_neighbours(const GraphSide& side, int64_t degree, uint64_t seed,
                                   uint64_t stream, Parallel& par);

/// One pair per non-hub vertex of `side` (curve rank c: index c of out): its id and
/// a partner drawn from `other`'s curve; -1, -1 where skip[side-local id] is set.
void anchor_pairs(const GraphSide& side, const GraphSide& other, const uint8_t* skip,
                  uint64_t seed, uint64_t stream, int32_t* out, Parallel& par);

/// Closures k in [first, first + count): a center drawn from centers[0, num_centers),
/// then up to `group` distinct neighbours of it not marked in `barred` (by id),
/// every two of them joined: group * (group - 1) / 2 pairs a closure in out, padded
/// with loops (center, center).
void closure_pairs(const int64_t* indptr, const int32_t* indices, const int32_t* centers,
                   int64_t num_centers, const uint8_t* barred, int group, uint64_t seed,
                   uint64_t stream, int64_t first, int64_t count, int32_t* out, Parallel& par);

/// The edges u < v of the candidate rows that are not in the base rows (base_indptr
/// may be null: no base graph), `need` of them at most: when more are new, those
/// with the smallest mix64((u << 32 | v) ^ key). As (m, 2) pairs, by u then v;
/// `available` gets the number of new edges.
OwnedArray<int32_t> new_edges(const int64_t* cand_indptr, const int32_t* cand_indices, int64_t n,
                              const int64_t* base_indptr, const int32_t* base_indices,
                              uint64_t key, int64_t need, int64_t* available, Parallel& par);

}  // namespace gthinker
