// Master: the G-ThinkerCG scheduler (Algorithm 2) and the CPU worker pool.
//
//            +---------------- Master (caller's thread) ----------------+
//            |  W: queue of idle workers       V: vertex deque          |
//            |  S: spill stack of task records (served first to CPUs)   |
//            +-----------+-------------------------------+--------------+
//      front chunks (GPU) |                             | back chunks (CPU), S batches
//                         v                             v
//        [GPU / external workers]             [CPU worker] x n_threads
//                                                  | compute(task); on timeout the
//                                                  | remaining branches go to L_o,
//                                                  +-> flushed to S in batches
//
// One mutex guards W, V, S and every worker's assignment slot, so "S became
// non-empty", "worker went idle" and "wake the master" can never race past
// each other (no lost wake-ups, no polling). Computation runs outside it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "result_writer.hpp"
#include "spill_stack.hpp"
#include "task_arena.hpp"
#include "vertex_deque.hpp"
#include "worker_context.hpp"

namespace gthinker {

/// The compiled entry point of a user Task (one Numba cfunc: Numba links and
/// optimises every cfunc with all the code it calls, so one is half the
/// compile time of two). With rec == nullptr it spawns and computes the
/// initial task of vertex v; otherwise it computes record rec[0..len).
using TaskEntryFn = int32_t (*)(void* ctx, int32_t v, const int32_t* rec, int64_t len);

/// Read-only view of the graph (arrays owned by the Python side).
struct GraphView {
  const int64_t* indptr = nullptr;
  int64_t num_vertices = 0;
  const int32_t* indices = nullptr;
  int64_t num_indices = 0;
  const int32_t* labels = nullptr;  // may be null
  const int64_t* ids = nullptr;     // original ids, for emitted results
};

/// A job's settings. Every field is set by name from Python (gthinker/runtime.py reads
/// each from gthinker/options.py, where its default and its rule are written once, or
/// from the job itself); the names are the options' names.
struct JobConfig {
  int64_t threads{};                 // CPU worker threads
  int64_t external_workers{};        // workers driven from outside (the GPU engines)
  double time_budget{};              // seconds before a task decomposes
  double early_split{};              // while a CPU worker starves (idle, S empty), tasks
                                     // decompose after this long instead; <= 0: never
  double gpu_idle_split{};           // the same while a GPU worker waits (S empty)
  int64_t cpu_chunk{};               // most vertices per CPU assignment (from the back of V)
  int64_t gpu_chunk{};               // vertices per external assignment (from the front of V)
  std::vector<int64_t> gpu_cuts;     // ends of the external assignments in V (positions,
                                     // increasing; empty: gpu_chunk alone): chunks of about
                                     // even estimated cost, heavy first (gthinker/gpu/sharing.py)
  int64_t gpu_task_batch{};          // spilled tasks per external assignment, once V is empty
  int64_t cpu_task_batch{};          // spilled tasks per CPU assignment (from the top of S)
  int64_t flush_batch{};             // L_o records flushed to S in one lock
  int64_t spill_limit{};             // bytes S may hold
  int64_t timeout_check_interval{};  // timed_out() calls between clock reads
  int64_t n_counters{}, n_maxima{}, hist_rows{}, hist_bins{};
  std::vector<int64_t> params;
  std::string output;                // empty: results are not written
  int64_t output_format{};           // ResultWriter::kText lines or kBinary records
  int64_t limit{};                   // take() hands out at most this many (-1: no limit)
};

/// Why a job stopped early. kLimit and kStopped are not failures: the job
/// ended on request, keeping what it had found.
enum class JobError {
  kNone, kUser, kSpillLimit, kInterrupted, kOutput, kMemory, kExternal, kLimit, kStopped
};

struct JobStatus {
  JobError error = JobError::kNone;  // kExternal: see message
  int64_t code = 0;          // ErrorCode for kUser; errno for kOutput
  int64_t worker = -1;
  int64_t vertex = -1;       // vertex whose task failed, or -1 for a spilled record
  std::string message;
};

enum class WorkerKind { kCpu, kGpu };

/// A worker as the master sees it: an assignment slot and a wake-up signal.
///
/// A CPU worker that has spent more than the time budget on one assignment
/// hands back what it has not started (vertices to the master's returned
/// stack, served before the deque; records to S), so that a chunk of heavy
/// vertices from the back of a degeneracy order is never a straggler.
struct WorkerSlot {
  WorkerKind kind = WorkerKind::kCpu;
  int id = 0;
  bool has_work = false;
  uint64_t chunks = 0;   // assignments of vertices
  uint64_t batches = 0;  // assignments of spilled tasks
  std::vector<int32_t> vertices;  // L_v
  TaskArena tasks;                // L_t
  std::condition_variable cv;
};

class Master {
 public:
  Master(const GraphView& graph, std::vector<int32_t> initial_vertices, TaskEntryFn entry,
         JobConfig config);
  ~Master();
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  /// Runs the job to completion on the calling thread (which becomes the
  /// master). `tick` is called about every `tick_seconds` without any lock
  /// held; returning false aborts the job (e.g. Ctrl-C).
  JobStatus run(const std::function<bool()>& tick, double tick_seconds);

  /// Called by a worker (through gt_add_task) when its L_o is full or its
  /// task ended: moves the records to S under the master lock.
  /// Returns false if S would pass its byte limit (the job is then aborted).
  bool flush(WorkerContext& ctx);

  /// Called by compiled code through gt_check_time.
  bool check_time(WorkerContext& ctx);

  // ---- external workers -------------------------------------------------
  // Slots threads .. threads + external_workers - 1 have no thread of
  // their own: another thread (the GPU worker, which must launch kernels from
  // Python) drives them through these calls. They take big chunks from the
  // front of V and, once V is empty, batches from S (Algorithm 2, lines 7-9).

  /// Blocks until the master assigns work to external slot `i` (moved into
  /// `vertices` and `tasks`; returns true) or the job ends (returns false).
  bool external_wait(int i, std::vector<int32_t>& vertices, TaskArena& tasks);
  /// External slot `i` finished its assignment and goes back into W.
  void external_done(int i);
  /// Pushes records onto S (e.g. GPU-to-CPU stealing). Returns false, and
  /// fails the job, if S would pass its byte limit.
  bool push_tasks(TaskArena& records);
  /// Takes up to `max_records` records from the top of S into `out` (where the
  /// workers take theirs: the records spilled last, in the bundled apps the
  /// shallowest branches of the latest timeout), for another job to run:
  /// they leave this job, which then neither runs nor waits for them. Nothing
  /// is taken once the job is stopping or over. Returns the number taken.
  size_t take_tasks(size_t max_records, TaskArena& out);
  /// Takes up to `max_vertices` initial vertices that no worker has started (from
  /// the front of V, the end its CPU workers reach last, then the oldest of those
  /// handed back) into `out`, for another job to run: they leave this job. Nothing
  /// is taken once the job is stopping or over. Returns the number taken.
  size_t take_vertices(size_t max_vertices, std::vector<int32_t>& out);
  /// Initial vertices that no worker has started: in V and handed back (locks).
  size_t unstarted_vertices();
  /// Another job waits for tasks to take: for the next `seconds`, running tasks
  /// split after early_split (as when a worker starves) while S holds fewer
  /// than `records` records. Thread-safe, lock-free; a later call replaces it.
  void request_tasks(size_t records, double seconds);
  /// Hands initial vertices back (an external worker's unstarted part of its
  /// chunk): CPU workers take them after S and before the deque's back.
  void return_vertices(const int32_t* vertices, size_t n);
  /// Number of CPU workers waiting in W right now.
  size_t idle_cpu_workers() const { return idle_cpu_.load(std::memory_order_relaxed); }
  /// Stops the job on behalf of an external worker (e.g. a GPU error).
  void external_fail(const std::string& message);
  const std::vector<std::unique_ptr<WorkerSlot>>& slots() const { return slots_; }

  /// Called by compiled code through gt_take: claims up to `n` of the job's
  /// `limit` results and returns how many it got (all `n` without a limit).
  /// The claim that takes the last one stops the job (JobError::kLimit, not a
  /// failure). Thread-safe, lock-free until that last claim.
  int64_t take(int64_t n);

  /// Stops the job on request (JobError::kStopped, not a failure), the way
  /// the limit does: workers see timed_out(), decomposed records are dropped.
  /// Thread-safe; may be called before run (the job then ends at once) or
  /// while it runs. Does nothing once the job has ended or another reason
  /// stopped it first.
  void stop(const std::string& message);

  /// Stops the job because memory ran out in a callback (thread-safe).
  void fail_out_of_memory(const WorkerContext& ctx, const char* what);

  bool aborting() const { return abort_.load(std::memory_order_relaxed); }
  const std::vector<std::unique_ptr<WorkerContext>>& contexts() const { return contexts_; }
  const SpillStack& spill() const { return spill_; }
  /// Initial vertices taken out through take_vertices (read once the job is over).
  uint64_t vertices_taken() const { return vertices_taken_; }
  const JobConfig& config() const { return config_; }
  const int64_t* graph_ids() const { return graph_.ids; }
  double elapsed_seconds() const;
  /// Size of S without taking the lock (for progress lines; may be stale).
  size_t spill_tasks_relaxed() const { return spill_tasks_.load(std::memory_order_relaxed); }
  size_t spill_bytes_relaxed() const { return spill_bytes_.load(std::memory_order_relaxed); }

 private:
  void cpu_worker_loop(WorkerSlot& slot, WorkerContext& ctx);
  void process_assignment(WorkerSlot& slot, WorkerContext& ctx);
  bool finish_task(WorkerContext& ctx, int32_t rc, int64_t vertex);
  void give_back(WorkerSlot& slot, size_t next_vertex, size_t next_record);
  bool has_cpu_work() const {  // requires mu_ held
    return !spill_.empty() || !returned_.empty() || !deque_.empty();
  }
  bool can_take(const WorkerSlot& w) const {  // requires mu_ held
    return w.kind == WorkerKind::kCpu ? has_cpu_work()
                                      : (!deque_.empty() || !spill_.empty() || !returned_.empty());
  }
  void go_idle(WorkerSlot& w);  // requires mu_ held
  /// Vertices for a CPU assignment out of `left` unstarted ones: cpu_chunk, but no
  /// more than half of an even share of them per CPU worker (at least one), so
  /// that the last vertices spread over the workers instead of queueing behind
  /// one, and stay in V or returned_ (where take_vertices finds them).
  int64_t cpu_chunk(size_t left) const;
  /// Moves up to `chunk` vertices from the back of returned_ into `w`. Requires mu_ held.
  void take_returned(WorkerSlot& w, int64_t chunk);
  /// Moves `batch` onto S (it ends empty), failing the job instead if S would
  /// pass its byte limit. Requires mu_ held.
  bool push_to_spill(TaskArena& batch, int64_t worker, bool enforce_limit);
  void publish_spill_size();  // requires mu_ held
  void fail(const JobStatus& status);  // requires mu_ held
  /// Hands a worker's emitted lines to the writer; a failed write stops the job.
  void write_results(WorkerContext& ctx);
  /// Stops the job with kOutput: the writer's errno in `code` (EPIPE: a closed pipe).
  void fail_output();
  void assign(WorkerSlot& w);          // requires mu_ held

  GraphView graph_;
  TaskEntryFn entry_;
  JobConfig config_;
  std::unique_ptr<ResultWriter> writer_;

  // Hot shared state; alignment keeps the flags the workers poll off the
  // cache line that the mutex bounces between cores.
  alignas(64) std::mutex mu_;
  std::condition_variable master_cv_;
  VertexDeque deque_;
  std::vector<int32_t> returned_;  // unstarted vertices handed back by CPU workers
  uint64_t vertices_taken_ = 0;    // initial vertices given to another job (take_vertices)
  SpillStack spill_;
  std::deque<WorkerSlot*> idle_;  // W
  bool end_ = false;
  bool ran_ = false;
  JobStatus status_;
  alignas(64) std::atomic<bool> abort_{false};
  std::atomic<size_t> spill_tasks_{0};
  std::atomic<size_t> idle_cpu_{0};  // |W|, for check_time's demand-driven splitting
  std::atomic<size_t> idle_external_{0};  // idle GPU workers, for the same
  std::atomic<size_t> spill_bytes_{0};
  std::atomic<int64_t> quota_{0};  // what take() may still hand out (with a limit)
  std::atomic<size_t> requested_{0};  // request_tasks: S should hold this many records
  std::atomic<int64_t> request_until_{0};  // ... until this steady_clock tick count

  std::chrono::steady_clock::time_point start_;
  std::vector<std::unique_ptr<WorkerSlot>> slots_;
  std::vector<std::unique_ptr<WorkerContext>> contexts_;
  std::vector<std::thread> threads_;  // joined in run() and, at the latest, the destructor
};

}  // namespace gthinker
