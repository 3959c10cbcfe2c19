// CSR kernels on all cores: endpoint pairs to sorted, symmetric, loop- and
// duplicate-free rows; ids remapped to 0..n-1; the degeneracy (smallest-last)
// order; rows oriented by a rank; rows renumbered; a structure check for rows
// that come from a file. Every kernel gives the same arrays whatever the
// number of threads.
#pragma once

#include <cstdint>
#include <string>

#include "owned_array.hpp"
#include "parallel.hpp"

namespace gthinker {

struct Csr {
  OwnedArray<int64_t> indptr;   // n + 1
  OwnedArray<int32_t> indices;  // sorted rows
  int64_t loops = 0;            // pairs (u, u) dropped
  int64_t duplicates = 0;       // repeated pairs dropped (u v after v u counts)
};

/// The smallest and largest of a[0, count) (0, 0 when empty); Id is int64_t or int32_t.
template <typename Id>
void min_max(const Id* a, int64_t count, int64_t* lo, int64_t* hi, Parallel& par);

/// Renumbers the ids in a[0, count) (in place) as 0..n-1 by increasing id,
/// with a table over 0..max_id (the caller checks that it is small enough);
/// the ids extra[0, extra_count) (in range too) are numbered as well, without
/// being renamed; ids gets the id of each new number. When every id in
/// 0..max_id is present, a is left as it is (each id is its own number).
template <typename Id>
void remap_dense(Id* a, int64_t count, const int64_t* extra, int64_t extra_count,
                 int64_t max_id, OwnedArray<int64_t>& ids, Parallel& par);

/// The undirected graph on vertices 0..n-1 of the pairs (u[i*stride], v[i*stride]),
/// i < count. Ids must lie in [0, n) (std::out_of_range otherwise).
template <typename Id>
Csr build_csr(const Id* u, const Id* v, int64_t stride, int64_t count, int64_t n, Parallel& par);

/// Rows built in the memory of the pairs they come from: indices[0, indptr[n]) are
/// the first entries of `pairs`.
struct InPlaceCsr {
  OwnedArray<int64_t> indptr;  // n + 1
  int64_t loops = 0;
  int64_t duplicates = 0;
};

/// build_csr of the pairs (pairs[2i], pairs[2i + 1]), i < count, written over them:
/// the upper rows (row min(u, v) holds max(u, v), half the entries) are built first,
/// then the symmetric rows from them into the pairs' memory, which is no longer
/// needed. Holds 12 bytes an edge at its peak where build_csr holds 16.
InPlaceCsr build_csr_in_place(int32_t* pairs, int64_t count, int64_t n, Parallel& par);

/// Level-synchronous peeling on all cores: order[i] is the i-th vertex peeled,
/// core[v] its core number. Level k = 0, 1, ... removes, in rounds, every
/// remaining vertex whose remaining degree is at most k, one round's vertices by
/// increasing id; so each vertex has at most core[v] neighbours after it in order.
void degeneracy_order(const int64_t* indptr, const int32_t* indices, int64_t n, int32_t* order,
                      int32_t* core, Parallel& par);

/// Row v keeps its neighbours u with rank[u] > rank[v]. With renumber, row
/// rank[v] holds those rank[u], sorted; else row v holds the u (sorted by id).
Csr orient(const int64_t* indptr, const int32_t* indices, int64_t n, const int32_t* rank,
           bool renumber, Parallel& par);

/// Row i is old row order[i] with every neighbour u renamed inv[u], sorted.
Csr permute(const int64_t* indptr, const int32_t* indices, int64_t n, const int64_t* order,
            const int64_t* inv, Parallel& par);

/// The in-rows of a directed CSR: for each target u, in_ptr[u]..in_ptr[u + 1]
/// holds the sources v of its edges in increasing order (in_src) and each edge's
/// place in its source's row (in_pos, from 0); after[u] counts the entries that
/// follow u in those rows (what scanning each source's row past u reads).
struct InRows {
  OwnedArray<int64_t> in_ptr;
  OwnedArray<int32_t> in_src;
  OwnedArray<int32_t> in_pos;
  OwnedArray<int64_t> after;
};
InRows in_rows(const int64_t* indptr, const int32_t* indices, int64_t n, Parallel& par);

/// "" if indptr is a monotone offset array from 0 to num_indices and every row
/// holds ids in [0, n) in strictly increasing order; else what is wrong.
std::string check_rows(const int64_t* indptr, int64_t n, const int32_t* indices,
                       int64_t num_indices, Parallel& par);

}  // namespace gthinker
