// pybind11 glue for the graph kernels (reading, building, preparing and
// writing graphs): each call releases the GIL, runs on the threads it is
// given, and checks for signals every tick; a signal's Python handler runs
// there, and its exception (KeyboardInterrupt) ends the call once every
// thread has stopped.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "csr_kernels.hpp"
#include "graph_generate.hpp"
#include "parallel.hpp"
#include "text_format.hpp"
#include "text_scanner.hpp"

namespace py = pybind11;
using namespace gthinker;

namespace {

template <typename T>
using In = py::array_t<T, py::array::c_style | py::array::forcecast>;

/// Runs f(par) without the GIL on `threads` threads; a signal handler's
/// exception (asked for every tick) stops it and is raised here.
template <typename F>
auto interruptible(int threads, F&& f) {
  std::unique_ptr<py::error_already_set> raised;
  KeepGoing keep_going = [&raised]() {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0) return true;
    raised = std::make_unique<py::error_already_set>();
    return false;
  };
  Parallel par(threads, keep_going);
  try {
    py::gil_scoped_release release;
    return f(par);
  } catch (const Interrupted&) {
    if (raised) throw std::move(*raised);
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
}

/// An OwnedArray as a NumPy array that owns (and frees) its buffer.
template <typename T>
py::array_t<T> to_numpy(OwnedArray<T>&& a, std::vector<py::ssize_t> shape) {
  T* p = a.release();
  if (p == nullptr) p = static_cast<T*>(std::malloc(sizeof(T)));
  if (p == nullptr) throw std::bad_alloc();
  py::capsule owner(p, [](void* q) { std::free(q); });
  return py::array_t<T>(shape, p, owner);
}

template <typename T>
py::array_t<T> to_numpy(OwnedArray<T>&& a) {
  const auto n = static_cast<py::ssize_t>(a.size());
  return to_numpy(std::move(a), {n});
}

py::tuple csr_tuple(Csr&& c) {
  const int64_t n = static_cast<int64_t>(c.indptr.size());
  auto ptr = to_numpy(std::move(c.indptr));
  auto idx = to_numpy(std::move(c.indices));
  (void)n;
  return py::make_tuple(ptr, idx, c.loops, c.duplicates);
}

int64_t rows_of(const In<int64_t>& indptr) {
  if (indptr.ndim() != 1 || indptr.size() < 1) throw std::invalid_argument("indptr must be 1-d, n + 1 long");
  return static_cast<int64_t>(indptr.size()) - 1;
}

/// TextScanner as Python sees it: scan(buffer) block by block, then take().
class PyTextScanner {
 public:
  PyTextScanner(int nfields, py::bytes required, bool tagged, bool keep_meta, bool isolated,
                bool narrow) {
    const std::string req = required;
    if (nfields < 1 || nfields > 8) throw std::invalid_argument("nfields must be in 1..8");
    if (req.size() != 256) throw std::invalid_argument("required must be 256 bytes");
    ScanSpec spec;
    spec.nfields = nfields;
    for (int i = 0; i < 256; ++i) {
      spec.required[i] = static_cast<int8_t>(req[static_cast<size_t>(i)]);
      if (spec.required[i] > nfields) throw std::invalid_argument("required > nfields");
    }
    spec.tagged = tagged;
    spec.keep_meta = keep_meta;
    spec.isolated = isolated;
    spec.narrow = narrow;
    scanner_ = std::make_unique<TextScanner>(spec);
    nfields_ = nfields;
  }

  bool scan(py::buffer data, int threads) {
    py::buffer_info info = data.request();
    const char* p = static_cast<const char*>(info.ptr);
    const auto len = static_cast<size_t>(info.size * info.itemsize);
    return interruptible(threads, [&](Parallel& par) { return scanner_->scan(p, len, par); });
  }

  py::tuple error() const {
    const ScanError& e = scanner_->error();
    return py::make_tuple(e.kind, e.line, e.field);
  }

  py::tuple take() {
    TextScanner& s = *scanner_;
    const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(s.records()),
                                         static_cast<py::ssize_t>(nfields_)};
    s.vals.shrink_to_fit();  // the room for growth goes back: a graph may keep this memory
    s.vals32.shrink_to_fit();
    py::array vals = s.narrowed() ? py::array(to_numpy(std::move(s.vals32), shape))
                                  : py::array(to_numpy(std::move(s.vals), shape));
    return py::make_tuple(vals, to_numpy(std::move(s.tags)), to_numpy(std::move(s.linenos)),
                          to_numpy(std::move(s.isolated)));
  }

  TextScanner& scanner() { return *scanner_; }

 private:
  std::unique_ptr<TextScanner> scanner_;
  int nfields_ = 2;
};

/// Elements per step and the data of a 1-d array of T (any stride in whole items).
template <typename T>
std::pair<const T*, int64_t> strided(const py::array& a) {
  if (a.ndim() != 1) throw std::invalid_argument("expected a 1-d array");
  const auto step = a.size() <= 1 ? static_cast<py::ssize_t>(sizeof(T)) : a.strides(0);
  if (step <= 0 || step % static_cast<py::ssize_t>(sizeof(T)) != 0)
    throw std::invalid_argument("array strides must be positive whole items");
  return {static_cast<const T*>(a.data()), static_cast<int64_t>(step / static_cast<py::ssize_t>(sizeof(T)))};
}

template <typename T>
py::tuple build_typed(const py::array& u, const py::array& v, int64_t n, int threads) {
  auto [pu, su] = strided<T>(u);
  auto [pv, sv] = strided<T>(v);
  if (su != sv) throw std::invalid_argument("u and v must have the same stride");
  const int64_t count = static_cast<int64_t>(u.size());
  return csr_tuple(interruptible(threads, [&](Parallel& par) {
    return build_csr<T>(pu, pv, su, count, n, par);
  }));
}

py::tuple build(const py::array& u, const py::array& v, int64_t n, int threads) {
  if (u.size() != v.size()) throw std::invalid_argument("u and v must have the same length");
  if (n < 0 || n > INT32_MAX) throw std::invalid_argument("n must be in [0, 2**31)");
  if (u.dtype().is(py::dtype::of<int64_t>()) && v.dtype().is(py::dtype::of<int64_t>()))
    return build_typed<int64_t>(u, v, n, threads);
  if (u.dtype().is(py::dtype::of<int32_t>()) && v.dtype().is(py::dtype::of<int32_t>()))
    return build_typed<int32_t>(u, v, n, threads);
  throw std::invalid_argument("u and v must both be int64 or both int32");
}

template <typename Id>
py::tuple min_max_typed(const py::array& a, int threads) {
  const auto* p = static_cast<const Id*>(a.data());
  const auto n = static_cast<int64_t>(a.size());
  int64_t lo = 0, hi = 0;
  interruptible(threads, [&](Parallel& par) { min_max(p, n, &lo, &hi, par); return 0; });
  return py::make_tuple(lo, hi);
}

py::tuple min_max_of(const py::array& a, int threads) {
  if (!(a.flags() & py::array::c_style)) throw std::invalid_argument("min_max needs a C-contiguous array");
  if (a.dtype().is(py::dtype::of<int64_t>())) return min_max_typed<int64_t>(a, threads);
  if (a.dtype().is(py::dtype::of<int32_t>())) return min_max_typed<int32_t>(a, threads);
  throw std::invalid_argument("min_max needs an int64 or int32 array");
}

template <typename Id>
py::array_t<int64_t> remap_typed(py::array& a, const In<int64_t>& extra, int64_t max_id, int threads) {
  auto* p = static_cast<Id*>(a.mutable_data());
  const auto n = static_cast<int64_t>(a.size());
  const auto ne = static_cast<int64_t>(extra.size());
  for (int64_t i = 0; i < ne; ++i)
    if (extra.data()[i] < 0 || extra.data()[i] > max_id) throw std::invalid_argument("extra id out of range");
  OwnedArray<int64_t> ids;
  interruptible(threads, [&](Parallel& par) {
    remap_dense(p, n, extra.data(), ne, max_id, ids, par);
    return 0;
  });
  return to_numpy(std::move(ids));
}

py::array_t<int64_t> remap(py::array a, const In<int64_t>& extra, int64_t max_id, int threads) {
  if (!(a.flags() & py::array::c_style) || !a.writeable())
    throw std::invalid_argument("remap_dense needs a writable C-contiguous array");
  if (max_id < 0 || max_id >= INT32_MAX) throw std::invalid_argument("max_id must be in [0, 2**31 - 1)");
  if (a.dtype().is(py::dtype::of<int64_t>())) return remap_typed<int64_t>(a, extra, max_id, threads);
  if (a.dtype().is(py::dtype::of<int32_t>())) return remap_typed<int32_t>(a, extra, max_id, threads);
  throw std::invalid_argument("remap_dense needs an int64 or int32 array");
}


/// A GraphSide from (count, lo, hi, gamma, hubs, size, offset, scatter_key).
GraphSide side_of(const py::tuple& t) {
  if (t.size() != 8) throw std::invalid_argument("a side is (count, lo, hi, gamma, hubs, size, offset, key)");
  GraphSide s;
  const auto count = t[0].cast<int64_t>();
  const auto lo = t[1].cast<double>(), hi = t[2].cast<double>();
  s.curve = WeightCurve(count, lo, hi, t[3].cast<double>());
  s.hubs = t[4].cast<int64_t>();
  s.size = t[5].cast<int64_t>();
  s.offset = t[6].cast<int64_t>();
  s.scatter_key = t[7].cast<uint64_t>();
  if (s.size < 0 || s.hubs < 0 || count != s.size - s.hubs || s.offset < 0 ||
      s.offset + s.size > INT32_MAX || !(lo > 0.0) || !(hi >= lo))
    throw std::invalid_argument("bad side: need 0 <= hubs <= size, count = size - hubs, "
                                "offset + size < 2**31 and 0 < lo <= hi");
  return s;
}

/// A new (rows, 2) int32 NumPy array and its data.
std::pair<py::array_t<int32_t>, int32_t*> pair_array(int64_t rows) {
  py::array_t<int32_t> a({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(2)});
  return {a, a.mutable_data()};
}

void bind_generators(py::module_& m) {
  m.def("gen_mix", &mix64, py::arg("x"), "SplitMix64's finaliser of a 64-bit word");
  m.def("gen_scatter", [](uint64_t size, uint64_t key, uint64_t x) {
    if (x >= size) throw std::invalid_argument("x must be below size");
    return Scatter(size, key)(x);
  }, py::arg("size"), py::arg("key"), py::arg("x"),
     "Where the keyed bijection of [0, size) sends x (a side's rank to its id)");
  m.def("gen_draw_pairs", [](const py::tuple& a, const py::tuple& b, uint64_t seed, uint64_t stream,
                             int64_t first, int64_t count, int threads) {
    const GraphSide sa = side_of(a), sb = side_of(b);
    if (count < 0 || first < 0) throw std::invalid_argument("first and count must be >= 0");
    if (sa.curve.count() < 1 || sb.curve.count() < 1) throw std::invalid_argument("a side without non-hub vertices");
    auto [arr, out] = pair_array(count);
    interruptible(threads, [&](Parallel& par) { draw_pairs(sa, sb, seed, stream, first, count, out, par); return 0; });
    return arr;
  }, py::arg("a"), py::arg("b"), py::arg("seed"), py::arg("stream"), py::arg("first"),
     py::arg("count"), py::arg("threads"),
     "(count, 2) int32: pairs first..first+count-1 of a stream, one end drawn from each side");

  m.def("gen_hub_neighbours", [](const py::tuple& side, int64_t degree, uint64_t seed,
                                 uint64_t stream, int threads) {
    const GraphSide s = side_of(side);
    return to_numpy(interruptible(threads, [&](Parallel& par) {
      return hub_neighbours(s, degree, seed, stream, par);
    }));
  }, py::arg("side"), py::arg("degree"), py::arg("seed"), py::arg("stream"), py::arg("threads"),
     "int32 ids of `degree` distinct non-hub vertices drawn by weight without replacement");

  m.def("gen_anchor_pairs", [](const py::tuple& side, const py::tuple& other, py::object skip,
                               uint64_t seed, uint64_t stream, int threads) {
    const GraphSide s = side_of(side), o = side_of(other);
    if (o.curve.count() < 1) throw std::invalid_argument("a side without non-hub vertices");
    In<uint8_t> mask;
    const uint8_t* skip_p = nullptr;
    if (!skip.is_none()) {
      mask = skip.cast<In<uint8_t>>();
      if (mask.size() != s.size) throw std::invalid_argument("skip must have one entry per vertex of the side");
      skip_p = mask.data();
    }
    auto [arr, out] = pair_array(s.curve.count());
    interruptible(threads, [&](Parallel& par) { anchor_pairs(s, o, skip_p, seed, stream, out, par); return 0; });
    return arr;
  }, py::arg("side"), py::arg("other"), py::arg("skip"), py::arg("seed"), py::arg("stream"),
     py::arg("threads"), "(non-hub vertices, 2) int32: each one's anchor pair; -1, -1 where skipped");

  m.def("gen_closure_pairs", [](const In<int64_t>& indptr, const In<int32_t>& indices,
                                const In<int32_t>& centers, py::object barred, int group,
                                uint64_t seed, uint64_t stream, int64_t first, int64_t count,
                                int threads) {
    const int64_t n = rows_of(indptr);
    if (indptr.data()[n] != static_cast<int64_t>(indices.size()))
      throw std::invalid_argument("indptr must end at the number of entries");
    In<uint8_t> mask;
    const uint8_t* barred_p = nullptr;
    if (!barred.is_none()) {
      mask = barred.cast<In<uint8_t>>();
      if (mask.size() != n) throw std::invalid_argument("barred must have n entries");
      barred_p = mask.data();
    }
    for (py::ssize_t i = 0; i < centers.size(); ++i)
      if (centers.data()[i] < 0 || centers.data()[i] >= n) throw std::invalid_argument("center out of range");
    if (count < 0 || first < 0) throw std::invalid_argument("first and count must be >= 0");
    if (group < 2 || group > 16) throw std::invalid_argument("group must be in 2..16");
    const int64_t per = int64_t{group} * (group - 1) / 2;
    auto [arr, out] = pair_array(count * per);
    interruptible(threads, [&](Parallel& par) {
      closure_pairs(indptr.data(), indices.data(), centers.data(), centers.size(), barred_p, group,
                    seed, stream, first, count, out, par);
      return 0;
    });
    return arr;
  }, py::arg("indptr"), py::arg("indices"), py::arg("centers"), py::arg("barred"), py::arg("group"),
     py::arg("seed"), py::arg("stream"), py::arg("first"), py::arg("count"), py::arg("threads"),
     "(count * group * (group - 1) / 2, 2) int32: the pairs of each closure, loops as padding");

  m.def("gen_new_edges", [](const In<int64_t>& indptr, const In<int32_t>& indices, py::object base_indptr,
                            py::object base_indices, uint64_t key, int64_t need, int threads) {
    const int64_t n = rows_of(indptr);
    In<int64_t> bi;
    In<int32_t> bx;
    if (!base_indptr.is_none()) {
      bi = base_indptr.cast<In<int64_t>>();
      bx = base_indices.cast<In<int32_t>>();
      if (rows_of(bi) != n) throw std::invalid_argument("the base graph must have n rows");
    }
    int64_t available = 0;
    OwnedArray<int32_t> out = interruptible(threads, [&](Parallel& par) {
      return new_edges(indptr.data(), indices.data(), n, base_indptr.is_none() ? nullptr : bi.data(),
                       base_indptr.is_none() ? nullptr : bx.data(), key, need, &available, par);
    });
    const auto rows = static_cast<py::ssize_t>(out.size() / 2);
    return py::make_tuple(to_numpy(std::move(out), {rows, 2}), available);
  }, py::arg("indptr"), py::arg("indices"), py::arg("base_indptr"), py::arg("base_indices"),
     py::arg("key"), py::arg("need"), py::arg("threads"),
     "((k, 2) int32 new edges u < v, number available): candidate edges not in the base, "
     "`need` at most (the smallest hashes under `key`)");
}

}  // namespace

void bind_graph_kernels(py::module_& m) {
  bind_generators(m);
  py::class_<PyTextScanner>(m, "TextScanner",
                            "Scans text blocks of whole lines into records of integers.")
      .def(py::init<int, py::bytes, bool, bool, bool, bool>(), py::arg("nfields"),
           py::arg("required"), py::arg("tagged"), py::arg("keep_meta"), py::arg("isolated"),
           py::arg("narrow") = false)
      .def("scan", &PyTextScanner::scan, py::arg("data"), py::arg("threads"),
           "Scans a block of whole lines (the final block's last may lack its newline); "
           "False at the first bad line (see error).")
      .def_property_readonly("lines", [](PyTextScanner& s) { return s.scanner().lines(); })
      .def_property_readonly("records", [](PyTextScanner& s) { return s.scanner().records(); })
      .def_property_readonly("narrowed", [](PyTextScanner& s) { return s.scanner().narrowed(); },
                             "Whether the records so far are kept as int32")
      .def_property_readonly("first_record_line",
                             [](PyTextScanner& s) { return s.scanner().first_record_line(); })
      .def_property_readonly("error", &PyTextScanner::error, "(kind, line, field); kind 0: none")
      .def("take", &PyTextScanner::take,
           "(vals (records, nfields) int64, or int32 with narrow when every value fits; tags "
           "uint8, line numbers int64, isolated ids int64)");

  m.def("min_max", &min_max_of, py::arg("a"), py::arg("threads"),
        "(smallest, largest) of an int64 or int32 array ((0, 0) if empty)");

  m.def("remap_dense", &remap, py::arg("a"), py::arg("extra"), py::arg("max_id"),
        py::arg("threads"),
        "Renumbers the ids in a (int64 or int32, in place) as 0..n-1 by increasing id, the "
        "extra ids numbered too; returns the ids.");

  m.def("build_csr", &build, py::arg("u"), py::arg("v"), py::arg("n"), py::arg("threads"),
        "(indptr, indices, loops, duplicates) of the undirected graph of pairs (u[i], v[i]).");

  m.def("build_csr_in_place", [](py::array pairs, int64_t n, int threads) {
    if (!pairs.dtype().is(py::dtype::of<int32_t>()) || !(pairs.flags() & py::array::c_style) ||
        !pairs.writeable() || pairs.ndim() != 2 || pairs.shape(1) != 2)
      throw std::invalid_argument("build_csr_in_place needs a writable C-contiguous (m, 2) int32 array");
    if (n < 0 || n > INT32_MAX) throw std::invalid_argument("n must be in [0, 2**31)");
    auto* p = static_cast<int32_t*>(pairs.mutable_data());
    const auto count = static_cast<int64_t>(pairs.shape(0));
    InPlaceCsr c = interruptible(threads, [&](Parallel& par) {
      return build_csr_in_place(p, count, n, par);
    });
    const int64_t entries = c.indptr[static_cast<size_t>(n)];
    return py::make_tuple(to_numpy(std::move(c.indptr)), entries, c.loops, c.duplicates);
  }, py::arg("pairs"), py::arg("n"), py::arg("threads"),
     "(indptr, entries, loops, duplicates): build_csr of the rows of pairs, the neighbour ids "
     "written over them (the first `entries` int32 of its memory).");

  m.def("degeneracy_order", [](const In<int64_t>& indptr, const In<int32_t>& indices, int threads) {
    const int64_t n = rows_of(indptr);
    OwnedArray<int32_t> order(static_cast<size_t>(n)), core(static_cast<size_t>(n));
    interruptible(threads, [&](Parallel& par) {
      degeneracy_order(indptr.data(), indices.data(), n, order.data(), core.data(), par);
      return 0;
    });
    return py::make_tuple(to_numpy(std::move(order)), to_numpy(std::move(core)));
  }, py::arg("indptr"), py::arg("indices"), py::arg("threads"), "(order, core), int32");

  m.def("orient", [](const In<int64_t>& indptr, const In<int32_t>& indices, const In<int32_t>& rank,
                     bool renumber, int threads) {
    const int64_t n = rows_of(indptr);
    if (rank.size() != n) throw std::invalid_argument("rank must have n entries");
    Csr c = interruptible(threads, [&](Parallel& par) {
      return orient(indptr.data(), indices.data(), n, rank.data(), renumber, par);
    });
    return py::make_tuple(to_numpy(std::move(c.indptr)), to_numpy(std::move(c.indices)));
  }, py::arg("indptr"), py::arg("indices"), py::arg("rank"), py::arg("renumber"), py::arg("threads"));

  m.def("permute", [](const In<int64_t>& indptr, const In<int32_t>& indices, const In<int64_t>& order,
                      const In<int64_t>& inv, int threads) {
    const int64_t n = rows_of(indptr);
    if (order.size() != n || inv.size() != n) throw std::invalid_argument("order and inv need n entries");
    Csr c = interruptible(threads, [&](Parallel& par) {
      return permute(indptr.data(), indices.data(), n, order.data(), inv.data(), par);
    });
    return py::make_tuple(to_numpy(std::move(c.indptr)), to_numpy(std::move(c.indices)));
  }, py::arg("indptr"), py::arg("indices"), py::arg("order"), py::arg("inv"), py::arg("threads"));

  m.def("in_rows", [](const In<int64_t>& indptr, const In<int32_t>& indices, int threads) {
    const int64_t n = rows_of(indptr);
    if (indptr.data()[n] != static_cast<int64_t>(indices.size()))
      throw std::invalid_argument("indptr must end at the number of entries");
    InRows r = interruptible(threads, [&](Parallel& par) {
      return in_rows(indptr.data(), indices.data(), n, par);
    });
    return py::make_tuple(to_numpy(std::move(r.in_ptr)), to_numpy(std::move(r.in_src)),
                          to_numpy(std::move(r.in_pos)), to_numpy(std::move(r.after)));
  }, py::arg("indptr"), py::arg("indices"), py::arg("threads"),
     "(in_ptr, in_src, in_pos, after): each target's sources in increasing order, each "
     "edge's place in its source's row, and per target the entries after it in those rows");

  m.def("check_rows", [](const In<int64_t>& indptr, const In<int32_t>& indices, int64_t n, int threads) {
    if (rows_of(indptr) != n) throw std::invalid_argument("indptr must have n + 1 entries");
    const auto m = static_cast<int64_t>(indices.size());
    return interruptible(threads, [&](Parallel& par) {
      return check_rows(indptr.data(), n, indices.data(), m, par);
    });
  }, py::arg("indptr"), py::arg("indices"), py::arg("n"), py::arg("threads"),
     "'' if the rows are sorted, in range and indptr is monotone; else what is wrong");

  m.def("format_edges", [](const In<int64_t>& indptr, const In<int32_t>& indices, py::object ids,
                           int64_t add, bool upper, const std::string& prefix, char sep,
                           int64_t row_begin, int64_t row_end, int threads) {
    const int64_t n = rows_of(indptr);
    if (row_begin < 0 || row_end > n || row_begin > row_end) throw std::invalid_argument("bad row range");
    EdgeLines how;
    In<int64_t> id_array;
    if (!ids.is_none()) {
      id_array = ids.cast<In<int64_t>>();
      if (id_array.size() != n) throw std::invalid_argument("ids must have n entries");
      how.ids = id_array.data();
    }
    how.indptr = indptr.data();
    how.indices = indices.data();
    how.add = add;
    how.upper = upper;
    how.prefix = prefix;
    how.sep = sep;
    return to_numpy(interruptible(threads, [&](Parallel& par) {
      return format_edges(how, row_begin, row_end, par);
    }));
  }, py::arg("indptr"), py::arg("indices"), py::arg("ids"), py::arg("add"), py::arg("upper"),
     py::arg("prefix"), py::arg("sep"), py::arg("row_begin"), py::arg("row_end"), py::arg("threads"),
     "The edge lines of rows [row_begin, row_end) as a char array.");

  m.def("format_rows", [](const In<int64_t>& mat, const std::string& prefix, char sep, int threads) {
    if (mat.ndim() != 2) throw std::invalid_argument("expected a 2-d array");
    const int64_t rows = mat.shape(0), cols = mat.shape(1);
    return to_numpy(interruptible(threads, [&](Parallel& par) {
      return format_rows(mat.data(), rows, cols, prefix, sep, par);
    }));
  }, py::arg("mat"), py::arg("prefix"), py::arg("sep"), py::arg("threads"));
}
