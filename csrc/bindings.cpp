// The only file that includes pybind11: exposes Master (one run of a user Task over a
// graph, gthinker._core.Master), JobConfig (its settings) and the extern "C" callbacks
// that compiled user code calls.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "master.hpp"

void bind_graph_kernels(pybind11::module_& m);  // graph_bindings.cpp

namespace py = pybind11;
using namespace gthinker;

// ---- callbacks from Numba-compiled code (no GIL; must never throw) -------

extern "C" {

int32_t gt_check_time(void* raw) {
  auto* ctx = static_cast<WorkerContext*>(raw);
  return ctx->master->check_time(*ctx) ? 1 : 0;
}

int32_t gt_add_task(void* raw, const int32_t* rec, int64_t len) {
  auto* ctx = static_cast<WorkerContext*>(raw);
  if (len <= 0) {  // an empty record would be computed, and add nothing, forever
    ctx->header[kError] = kEmptyRecord;
    return 3;
  }
  if (ctx->master->aborting()) return 1;
  try {
    ctx->out.push(rec, len);
  } catch (const std::bad_alloc&) {
    ctx->master->fail_out_of_memory(*ctx, "buffering a decomposed task");
    return 2;
  }
  ctx->stats.tasks_added.add();
  if (static_cast<int64_t>(ctx->out.num_tasks()) >= ctx->master->config().flush_batch)
    return ctx->master->flush(*ctx) ? 0 : 1;
  return 0;
}

int32_t gt_emit(void* raw, const int32_t* vals, int64_t len) {
  auto* ctx = static_cast<WorkerContext*>(raw);
  if (!ctx->header[kEmitting]) return 0;
  const int64_t n = ctx->header[kNumVertices];
  for (int64_t i = 0; i < len; ++i) {
    if (vals[i] < 0 || vals[i] >= n) {
      ctx->header[kError] = kEmitIndex;
      return 3;
    }
  }
  try {
    ResultWriter::format(ctx->master->config().output_format, vals, len,
                         ctx->master->graph_ids(), ctx->emit_buf);
  } catch (const std::bad_alloc&) {
    ctx->master->fail_out_of_memory(*ctx, "formatting emitted results");
    return 2;
  }
  return 0;
}

int64_t gt_take(void* raw, int64_t n) {
  return static_cast<WorkerContext*>(raw)->master->take(n);
}

}  // extern "C"

namespace {

template <typename T>
using CArray = py::array_t<T, py::array::c_style | py::array::forcecast>;

/// One job: a user Task over a graph, run by the Master and its workers (Python:
/// gthinker._core.Master).
class BoundMaster {
 public:
  BoundMaster(CArray<int64_t> indptr, CArray<int32_t> indices, py::object labels,
              CArray<int64_t> ids, CArray<int32_t> vertices, uintptr_t entry,
              const JobConfig& config)
      : indptr_(indptr), indices_(indices), ids_(ids) {
    GraphView g;
    g.indptr = indptr_.data();
    g.num_vertices = static_cast<int64_t>(indptr_.size()) - 1;
    g.indices = indices_.data();
    g.num_indices = static_cast<int64_t>(indices_.size());
    if (!labels.is_none()) {
      labels_ = labels.cast<CArray<int32_t>>();
      if (labels_.size() != g.num_vertices) throw std::invalid_argument("labels length != n");
      g.labels = labels_.data();
    }
    if (ids_.size() != g.num_vertices) throw std::invalid_argument("ids length != n");
    g.ids = ids_.data();
    std::vector<int32_t> init(vertices.data(), vertices.data() + vertices.size());
    master_ = std::make_unique<Master>(g, std::move(init),
                                       reinterpret_cast<TaskEntryFn>(entry), config);
  }

  /// Runs the job with the GIL released. `progress(snapshot)` is called every
  /// `interval` seconds (with the GIL); Ctrl-C aborts the job cleanly.
  py::dict run(py::object progress, double interval) {
    bool interrupted = false;
    double last_progress = 0;
    std::unique_ptr<py::error_already_set> progress_error;
    auto tick = [&]() -> bool {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        PyErr_Clear();
        interrupted = true;
        return false;
      }
      if (!progress.is_none() && master_->elapsed_seconds() - last_progress >= interval) {
        last_progress = master_->elapsed_seconds();
        try {
          progress(snapshot());
        } catch (py::error_already_set& e) {
          progress_error = std::make_unique<py::error_already_set>(std::move(e));
          return false;
        }
      }
      return true;
    };
    JobStatus st;
    {
      py::gil_scoped_release release;
      st = master_->run(tick, 0.1);
    }
    if (progress_error) throw std::move(*progress_error);  // the callback's own exception
    py::dict out;
    const char* kinds[] = {"none",   "user",   "spill_limit", "interrupted",
                           "output", "memory", "external", "limit", "stopped"};
    out["error"] = kinds[static_cast<int>(st.error)];
    out["code"] = st.code;
    out["worker"] = st.worker;
    out["vertex"] = st.vertex;
    out["message"] = st.message;
    out["interrupted"] = interrupted;
    return out;
  }

  /// Waits (GIL released) for work for external slot `i`. Returns None when
  /// the job is over, else (vertices int32, task data int32, task starts int64).
  py::object external_wait(int i) {
    std::vector<int32_t> vertices;
    TaskArena tasks;
    bool got;
    {
      py::gil_scoped_release release;
      got = master_->external_wait(i, vertices, tasks);
    }
    if (!got) return py::none();
    py::array_t<int32_t> v(static_cast<py::ssize_t>(vertices.size()));
    std::copy(vertices.begin(), vertices.end(), v.mutable_data());
    py::tuple records = record_arrays(tasks);
    return py::make_tuple(v, records[0], records[1]);
  }

  /// Takes up to `max_records` records from the top of S (GIL released),
  /// as (data int32, starts int64 with a final end offset): push_tasks' layout.
  /// They are this job's no more (it neither runs nor waits for them).
  py::tuple take_tasks(int64_t max_records) {
    if (max_records < 0) throw std::invalid_argument("max_records must be at least 0");
    TaskArena tasks;
    {
      py::gil_scoped_release release;
      master_->take_tasks(static_cast<size_t>(max_records), tasks);
    }
    return record_arrays(tasks);
  }

  /// Takes up to `max_vertices` unstarted initial vertices (GIL released), as an
  /// int32 array. They are this job's no more (it neither runs nor waits for them).
  py::array_t<int32_t> take_vertices(int64_t max_vertices) {
    if (max_vertices < 0) throw std::invalid_argument("max_vertices must be at least 0");
    std::vector<int32_t> got;
    {
      py::gil_scoped_release release;
      master_->take_vertices(static_cast<size_t>(max_vertices), got);
    }
    py::array_t<int32_t> out(static_cast<py::ssize_t>(got.size()));
    std::copy(got.begin(), got.end(), out.mutable_data());
    return out;
  }

  /// Records as (data int32, starts int64 of length k + 1).
  static py::tuple record_arrays(const TaskArena& tasks) {
    const size_t n = tasks.num_tasks();
    py::array_t<int64_t> starts(static_cast<py::ssize_t>(n + 1));
    int64_t total = 0;
    for (size_t k = 0; k < n; ++k) {
      int64_t len = 0;
      tasks.record(k, &len);
      starts.mutable_data()[k] = total;
      total += len;
    }
    starts.mutable_data()[n] = total;
    py::array_t<int32_t> data(static_cast<py::ssize_t>(total));
    for (size_t k = 0; k < n; ++k) {
      int64_t len = 0;
      const int32_t* rec = tasks.record(k, &len);
      std::copy(rec, rec + len, data.mutable_data() + starts.data()[k]);
    }
    return py::make_tuple(data, starts);
  }

  /// Pushes records (data, starts with a final end offset) onto S.
  bool push_tasks(CArray<int32_t> data, CArray<int64_t> starts) {
    TaskArena arena;
    const int64_t n = static_cast<int64_t>(starts.size()) - 1;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t b = starts.data()[k], e = starts.data()[k + 1];
      if (b < 0 || e < b || e > static_cast<int64_t>(data.size()))
        throw std::invalid_argument("task starts must be non-decreasing offsets into data");
      arena.push(data.data() + b, e - b);
    }
    py::gil_scoped_release release;
    return master_->push_tasks(arena);
  }

  /// Progress numbers, read without locks (may be slightly stale).
  py::dict snapshot() const {
    py::dict d;
    uint64_t done = 0, added = 0;
    std::vector<int64_t> counters(static_cast<size_t>(master_->config().n_counters), 0);
    for (const auto& c : master_->contexts()) {
      done += c->stats.vertices.get() + c->stats.records.get();
      added += c->stats.tasks_added.get();
      for (size_t i = 0; i < counters.size(); ++i) counters[i] += c->counter(i);
    }
    d["elapsed"] = master_->elapsed_seconds();
    d["tasks_done"] = done;
    d["tasks_decomposed"] = added;
    d["spill_tasks"] = master_->spill_tasks_relaxed();
    d["spill_bytes"] = master_->spill_bytes_relaxed();
    d["idle_cpu_workers"] = master_->idle_cpu_workers();
    d["counters"] = counters;
    return d;
  }

  /// Per-worker results merged: counters summed, maxima maxed, histograms summed.
  py::dict results() const {
    const JobConfig& c = master_->config();
    py::array_t<int64_t> counters(c.n_counters), maxima(c.n_maxima);
    py::array_t<int64_t> hist({c.hist_rows, c.hist_bins});
    auto cm = counters.mutable_unchecked<1>();
    auto mm = maxima.mutable_unchecked<1>();
    auto hm = hist.mutable_unchecked<2>();
    for (int64_t i = 0; i < c.n_counters; ++i) cm(i) = 0;
    for (int64_t i = 0; i < c.n_maxima; ++i) mm(i) = INT64_MIN;
    for (int64_t r = 0; r < c.hist_rows; ++r)
      for (int64_t b = 0; b < c.hist_bins; ++b) hm(r, b) = 0;
    for (const auto& w : master_->contexts()) {
      for (int64_t i = 0; i < c.n_counters; ++i) cm(i) += w->counter(static_cast<size_t>(i));
      for (int64_t i = 0; i < c.n_maxima; ++i) mm(i) = std::max(mm(i), w->maximum(static_cast<size_t>(i)));
      for (int64_t r = 0; r < c.hist_rows; ++r)
        for (int64_t b = 0; b < c.hist_bins; ++b) hm(r, b) += w->hist_at(static_cast<size_t>(r * c.hist_bins + b));
    }
    py::dict d;
    d["counters"] = counters;
    d["maxima"] = maxima;
    d["histograms"] = hist;
    return d;
  }

  Master& master() { return *master_; }

  py::dict stats() const {
    py::list workers;
    uint64_t vertices = 0, records = 0, added = 0;
    const auto& slots = master_->slots();
    for (size_t i = 0; i < master_->contexts().size(); ++i) {
      const auto& w = master_->contexts()[i];
      py::dict s;
      s["kind"] = "cpu";
      s["vertices"] = w->stats.vertices.get();
      s["records"] = w->stats.records.get();
      s["tasks_added"] = w->stats.tasks_added.get();
      s["chunks"] = slots[i]->chunks;
      s["batches"] = slots[i]->batches;
      s["busy_seconds"] = w->stats.busy_seconds;
      s["idle_seconds"] = w->stats.idle_seconds;
      vertices += w->stats.vertices.get();
      records += w->stats.records.get();
      added += w->stats.tasks_added.get();
      workers.append(s);
    }
    for (size_t i = master_->contexts().size(); i < slots.size(); ++i) {
      py::dict s;
      s["kind"] = "gpu";
      s["chunks"] = slots[i]->chunks;
      s["batches"] = slots[i]->batches;
      workers.append(s);
    }
    py::dict d;
    d["tasks_spawned"] = vertices;
    d["tasks_decomposed"] = added;
    d["records_computed"] = records;
    d["spill_peak_bytes"] = master_->spill().peak_bytes();
    d["spill_peak_tasks"] = master_->spill().peak_tasks();
    d["spill_limit_bytes"] = master_->spill().limit_bytes();
    d["tasks_taken"] = master_->spill().total_taken();
    d["vertices_taken"] = master_->vertices_taken();
    d["workers"] = workers;
    return d;
  }

 private:
  CArray<int64_t> indptr_;
  CArray<int32_t> indices_;
  CArray<int32_t> labels_;
  CArray<int64_t> ids_;
  std::unique_ptr<Master> master_;
};

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "gthinker C++ core: master scheduler, CPU worker pool, spill stack S";
  bind_graph_kernels(m);

  py::dict header;
  header["SELF"] = int(kSelf);
  header["WORKER_ID"] = int(kWorkerId);
  header["INDPTR"] = int(kIndptr);
  header["NUM_VERTICES"] = int(kNumVertices);
  header["INDICES"] = int(kIndices);
  header["NUM_INDICES"] = int(kNumIndices);
  header["LABELS"] = int(kLabels);
  header["NUM_LABELS"] = int(kNumLabels);
  header["COUNTERS"] = int(kCounters);
  header["NUM_COUNTERS"] = int(kNumCounters);
  header["MAXIMA"] = int(kMaxima);
  header["NUM_MAXIMA"] = int(kNumMaxima);
  header["HIST"] = int(kHist);
  header["HIST_ROWS"] = int(kHistRows);
  header["HIST_BINS"] = int(kHistBins);
  header["PARAMS"] = int(kParams);
  header["NUM_PARAMS"] = int(kNumParams);
  header["EMITTING"] = int(kEmitting);
  header["COUNTDOWN"] = int(kCountdown);
  header["TIMED_OUT"] = int(kTimedOut);
  header["ERROR"] = int(kError);
  header["NUM_WORKERS"] = int(kNumWorkers);
  header["LEN"] = int(kHeaderLen);
  m.attr("HEADER") = header;

  py::dict codes;
  codes["OK"] = int(kOk);
  codes["SPAWN_RAISED"] = int(kSpawnRaised);
  codes["COMPUTE_RAISED"] = int(kComputeRaised);
  codes["HISTOGRAM_INDEX"] = int(kHistogramIndex);
  codes["COUNTER_INDEX"] = int(kCounterIndex);
  codes["MAXIMUM_INDEX"] = int(kMaximumIndex);
  codes["EMIT_INDEX"] = int(kEmitIndex);
  codes["EMPTY_RECORD"] = int(kEmptyRecord);
  m.attr("ERROR_CODES") = codes;

  m.def("callback_addresses", []() {
    py::dict d;
    d["gt_check_time"] = reinterpret_cast<uintptr_t>(&gt_check_time);
    d["gt_add_task"] = reinterpret_cast<uintptr_t>(&gt_add_task);
    d["gt_emit"] = reinterpret_cast<uintptr_t>(&gt_emit);
    d["gt_take"] = reinterpret_cast<uintptr_t>(&gt_take);
    return d;
  }, "Addresses of the C callbacks that compiled task code calls (registered with llvmlite).");

  py::class_<JobConfig>(m, "JobConfig",
                        "A job's settings, each set by name from Python (gthinker/runtime.py).")
      .def(py::init<>())
      .def_readwrite("threads", &JobConfig::threads)
      .def_readwrite("external_workers", &JobConfig::external_workers)
      .def_readwrite("time_budget", &JobConfig::time_budget)
      .def_readwrite("early_split", &JobConfig::early_split)
      .def_readwrite("gpu_idle_split", &JobConfig::gpu_idle_split)
      .def_readwrite("cpu_chunk", &JobConfig::cpu_chunk)
      .def_readwrite("gpu_chunk", &JobConfig::gpu_chunk)
      .def_readwrite("gpu_cuts", &JobConfig::gpu_cuts)
      .def_readwrite("gpu_task_batch", &JobConfig::gpu_task_batch)
      .def_readwrite("cpu_task_batch", &JobConfig::cpu_task_batch)
      .def_readwrite("flush_batch", &JobConfig::flush_batch)
      .def_readwrite("spill_limit", &JobConfig::spill_limit)
      .def_readwrite("timeout_check_interval", &JobConfig::timeout_check_interval)
      .def_readwrite("n_counters", &JobConfig::n_counters)
      .def_readwrite("n_maxima", &JobConfig::n_maxima)
      .def_readwrite("hist_rows", &JobConfig::hist_rows)
      .def_readwrite("hist_bins", &JobConfig::hist_bins)
      .def_readwrite("params", &JobConfig::params)
      .def_readwrite("output", &JobConfig::output)
      .def_readwrite("output_format", &JobConfig::output_format)
      .def_readwrite("limit", &JobConfig::limit);

  py::class_<BoundMaster>(m, "Master")
      .def(py::init<CArray<int64_t>, CArray<int32_t>, py::object, CArray<int64_t>, CArray<int32_t>,
                    uintptr_t, const JobConfig&>(),
           py::arg("indptr"), py::arg("indices"), py::arg("labels"), py::arg("ids"),
           py::arg("vertices"), py::arg("entry"), py::arg("config"))
      .def("run", &BoundMaster::run, py::arg("progress") = py::none(), py::arg("interval") = 2.0)
      .def("external_wait", &BoundMaster::external_wait, py::arg("slot"))
      .def("external_done", [](BoundMaster& j, int i) { j.master().external_done(i); },
           py::arg("slot"))
      .def("external_fail",
           [](BoundMaster& j, const std::string& m) { j.master().external_fail(m); })
      .def("push_tasks", &BoundMaster::push_tasks, py::arg("data"), py::arg("starts"))
      .def("take_tasks", &BoundMaster::take_tasks, py::arg("max_records"),
           "Takes up to max_records records from the top of S (where workers take theirs) as "
           "(data, starts), for another job; thread-safe while run() blocks in another thread. "
           "Nothing once the job is stopping or over.")
      .def("take_vertices", &BoundMaster::take_vertices, py::arg("max_vertices"),
           "Takes up to max_vertices initial vertices that no worker has started (the front "
           "of the vertex deque, then those handed back) as an int32 array, for another job; "
           "thread-safe while run() blocks in another thread. Nothing once the job is "
           "stopping or over.")
      .def("unstarted_vertices",
           [](BoundMaster& j) { return j.master().unstarted_vertices(); },
           py::call_guard<py::gil_scoped_release>(),
           "Initial vertices that no worker has started yet (in the deque or handed back).")
      .def(
          "request_tasks",
          [](BoundMaster& j, int64_t records, double seconds) {
            j.master().request_tasks(static_cast<size_t>(std::max<int64_t>(records, 0)), seconds);
          },
          py::arg("records"), py::arg("seconds"),
          "For the next `seconds`, running tasks split early (as when a worker starves) "
          "while S holds fewer than `records` records: another job waits to take them.")
      .def(
          "stop",
          [](BoundMaster& j, const std::string& message) { j.master().stop(message); },
          py::arg("message") = "stopped on request", py::call_guard<py::gil_scoped_release>(),
          "Stops the job like the limit does (error 'stopped'); callable from another thread "
          "while run() blocks, and before run (which then ends at once).")
      .def("idle_cpu_workers", [](BoundMaster& j) { return j.master().idle_cpu_workers(); })
      .def("spill_tasks", [](BoundMaster& j) { return j.master().spill_tasks_relaxed(); })
      .def(
          "return_vertices",
          [](BoundMaster& j, CArray<int32_t> v) {
            const auto n = static_cast<size_t>(v.size());
            const int32_t* p = v.data();
            py::gil_scoped_release release;
            j.master().return_vertices(p, n);
          },
          py::arg("vertices"))
      .def("aborting", [](BoundMaster& j) { return j.master().aborting(); })
      .def("snapshot", &BoundMaster::snapshot)
      .def("results", &BoundMaster::results)
      .def("stats", &BoundMaster::stats);
}
