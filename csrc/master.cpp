#include "master.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace gthinker {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

Master::Master(const GraphView& graph, std::vector<int32_t> initial_vertices,
               TaskEntryFn entry, JobConfig config)
    : graph_(graph),
      entry_(entry),
      config_(std::move(config)),
      deque_(std::move(initial_vertices)),
      spill_(static_cast<size_t>(config_.spill_limit)) {
  if (config_.threads < 0) throw std::invalid_argument("threads must be at least 0");
  if (config_.external_workers < 0) throw std::invalid_argument("external workers must be >= 0");
  if (config_.threads + config_.external_workers < 1)
    throw std::invalid_argument("a job needs at least one worker");
  if (config_.cpu_chunk < 1) throw std::invalid_argument("cpu chunk must be at least 1");
  if (config_.cpu_task_batch < 1) throw std::invalid_argument("cpu task batch must be at least 1");
  if (config_.gpu_chunk < 1 || config_.gpu_task_batch < 1)
    throw std::invalid_argument("gpu chunk and gpu task batch must be at least 1");
  if (config_.flush_batch < 1) throw std::invalid_argument("flush batch must be at least 1");
  if (!(config_.time_budget > 0)) throw std::invalid_argument("time budget must be positive");
  if (!entry_ && config_.threads > 0)
    throw std::invalid_argument("compiled task entry point missing (CPU workers need one)");
  if (config_.output_format != ResultWriter::kText &&
      config_.output_format != ResultWriter::kBinary)
    throw std::invalid_argument("output format must be 0 (text) or 1 (binary records)");
  if (config_.limit == 0 || config_.limit < -1)
    throw std::invalid_argument("limit must be at least 1 (or -1 for none)");
  quota_.store(config_.limit, std::memory_order_relaxed);
  for (size_t i = 0; i < config_.gpu_cuts.size(); ++i)
    if (config_.gpu_cuts[i] < 1 || (i > 0 && config_.gpu_cuts[i] <= config_.gpu_cuts[i - 1]))
      throw std::invalid_argument("gpu cuts must be positive and increasing");
  deque_.set_cuts(config_.gpu_cuts);
  if (!config_.output.empty()) writer_ = std::make_unique<ResultWriter>(config_.output);

  for (int i = 0; i < config_.threads; ++i) {
    auto slot = std::make_unique<WorkerSlot>();
    slot->kind = WorkerKind::kCpu;
    slot->id = i;
    auto ctx = std::make_unique<WorkerContext>();
    ctx->master = this;
    const size_t pad2 = 2 * WorkerContext::kPad;
    ctx->counters.assign(static_cast<size_t>(config_.n_counters) + pad2, 0);
    ctx->maxima.assign(static_cast<size_t>(config_.n_maxima) + pad2, INT64_MIN);
    ctx->hist.assign(static_cast<size_t>(config_.hist_rows * config_.hist_bins) + pad2, 0);
    ctx->params = config_.params;
    ctx->countdown_reset = config_.timeout_check_interval > 0 ? config_.timeout_check_interval : 1;
    int64_t* h = ctx->header;
    h[kSelf] = reinterpret_cast<int64_t>(ctx.get());
    h[kWorkerId] = i;
    h[kIndptr] = reinterpret_cast<int64_t>(graph_.indptr);
    h[kNumVertices] = graph_.num_vertices;
    h[kIndices] = reinterpret_cast<int64_t>(graph_.indices);
    h[kNumIndices] = graph_.num_indices;
    h[kLabels] = reinterpret_cast<int64_t>(graph_.labels);
    h[kNumLabels] = graph_.labels ? graph_.num_vertices : 0;
    h[kCounters] = reinterpret_cast<int64_t>(ctx->counter_data());
    h[kNumCounters] = config_.n_counters;
    h[kMaxima] = reinterpret_cast<int64_t>(ctx->maxima_data());
    h[kNumMaxima] = config_.n_maxima;
    h[kHist] = reinterpret_cast<int64_t>(ctx->hist_data());
    h[kHistRows] = config_.hist_rows;
    h[kHistBins] = config_.hist_bins;
    h[kParams] = reinterpret_cast<int64_t>(ctx->params.data());
    h[kNumParams] = static_cast<int64_t>(ctx->params.size());
    h[kEmitting] = writer_ ? 1 : 0;
    h[kNumWorkers] = config_.threads;
    slots_.push_back(std::move(slot));
    contexts_.push_back(std::move(ctx));
  }
  for (int i = 0; i < config_.external_workers; ++i) {
    auto slot = std::make_unique<WorkerSlot>();
    slot->kind = WorkerKind::kGpu;
    slot->id = config_.threads + i;
    slots_.push_back(std::move(slot));
  }
}

Master::~Master() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    end_ = true;
    abort_ = true;
    for (auto& s : slots_) s->cv.notify_all();
  }
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

double Master::elapsed_seconds() const { return seconds_since(start_); }

JobStatus Master::run(const std::function<bool()>& tick, double tick_seconds) {
  if (ran_) throw std::logic_error("a Master runs one job only");
  ran_ = true;
  start_ = Clock::now();
  const auto tick_every = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(tick_seconds > 0 ? tick_seconds : 0.2));
  std::unique_lock<std::mutex> lock(mu_);
  for (size_t i = 0; i < slots_.size(); ++i) {
    idle_.push_back(slots_[i].get());
    if (slots_[i]->kind == WorkerKind::kCpu)
      threads_.emplace_back(&Master::cpu_worker_loop, this, std::ref(*slots_[i]),
                            std::ref(*contexts_[i]));
  }
  idle_cpu_.store(contexts_.size(), std::memory_order_relaxed);
  idle_external_.store(slots_.size() - contexts_.size(), std::memory_order_relaxed);
  auto next_tick = Clock::now() + tick_every;
  // Algorithm 2: hand out work until every worker is idle and V and S are empty.
  while (true) {
    if (tick && Clock::now() >= next_tick) {
      lock.unlock();
      bool keep_going = tick();
      lock.lock();
      if (!keep_going && status_.error == JobError::kNone) {
        JobStatus st;
        st.error = JobError::kInterrupted;
        st.message = "interrupted";
        fail(st);
      }
      next_tick = Clock::now() + tick_every;
    }
    const bool all_idle = idle_.size() == slots_.size();
    if (abort_ && all_idle) break;
    if (all_idle && !has_cpu_work()) break;
    // The first idle worker that can use what there is (can_take: a CPU worker
    // needs CPU work; a GPU or external worker takes V, S or handed-back vertices).
    WorkerSlot* w = nullptr;
    if (!abort_) {
      for (auto it = idle_.begin(); it != idle_.end(); ++it) {
        if (can_take(**it)) {
          w = *it;
          idle_.erase(it);
          break;
        }
      }
    }
    if (!w) {
      master_cv_.wait_until(lock, next_tick);
      continue;
    }
    if (w->kind == WorkerKind::kCpu) idle_cpu_.fetch_sub(1, std::memory_order_relaxed);
    else idle_external_.fetch_sub(1, std::memory_order_relaxed);
    assign(*w);
  }
  end_ = true;
  for (auto& s : slots_) s->cv.notify_all();
  lock.unlock();
  for (auto& t : threads_) t.join();
  threads_.clear();
  if (writer_ && !writer_->finish()) fail_output();
  return status_;
}

void Master::assign(WorkerSlot& w) {
  // Spilled tasks go in batches of at most cpu_task_batch, but never more than
  // an even share of S, so that a few spilled subtrees reach as many workers.
  const size_t share = spill_.num_tasks() / slots_.size();
  const size_t batch = std::max<size_t>(1, std::min<size_t>(config_.cpu_task_batch, share));
  if (w.kind == WorkerKind::kGpu) {
    if (!deque_.empty()) {
      deque_.pop_front(config_.gpu_chunk, w.vertices);
      w.chunks++;
    } else if (!returned_.empty() && spill_.empty()) {
      // Vertices a CPU worker handed back unstarted: better on the GPU than waiting.
      take_returned(w, config_.gpu_chunk);
    } else {
      spill_.pop_batch(static_cast<size_t>(config_.gpu_task_batch), w.tasks);
      w.batches++;
    }
  } else if (!spill_.empty()) {
    spill_.pop_batch(batch, w.tasks);
    w.batches++;
  } else if (!returned_.empty()) {
    take_returned(w, cpu_chunk(returned_.size()));
  } else {
    deque_.pop_back(cpu_chunk(static_cast<size_t>(deque_.size())), w.vertices);
    w.chunks++;
  }
  publish_spill_size();
  w.has_work = true;
  w.cv.notify_one();
}

int64_t Master::cpu_chunk(size_t left) const {
  const auto even = static_cast<int64_t>(left / (2 * static_cast<size_t>(config_.threads)));
  return std::max<int64_t>(1, std::min<int64_t>(config_.cpu_chunk, even));
}

void Master::take_returned(WorkerSlot& w, int64_t chunk) {
  const size_t k = std::min<size_t>(returned_.size(), static_cast<size_t>(chunk));
  w.vertices.assign(returned_.end() - static_cast<std::ptrdiff_t>(k), returned_.end());
  returned_.resize(returned_.size() - k);
  w.chunks++;
}

void Master::go_idle(WorkerSlot& w) {
  w.has_work = false;
  w.vertices.clear();
  w.tasks.clear();
  idle_.push_back(&w);
  if (w.kind == WorkerKind::kCpu) idle_cpu_.fetch_add(1, std::memory_order_relaxed);
  else idle_external_.fetch_add(1, std::memory_order_relaxed);
  master_cv_.notify_one();
}

bool Master::external_wait(int i, std::vector<int32_t>& vertices, TaskArena& tasks) {
  WorkerSlot& w = *slots_.at(static_cast<size_t>(i));
  if (w.kind != WorkerKind::kGpu) throw std::invalid_argument("not an external worker slot");
  std::unique_lock<std::mutex> lock(mu_);
  w.cv.wait(lock, [&] { return w.has_work || end_; });
  if (!w.has_work) return false;
  vertices.swap(w.vertices);
  w.vertices.clear();
  tasks.clear();
  tasks.append_all(w.tasks);
  return true;
}

void Master::external_done(int i) {
  WorkerSlot& w = *slots_.at(static_cast<size_t>(i));
  std::lock_guard<std::mutex> lock(mu_);
  if (w.kind == WorkerKind::kGpu && w.has_work) go_idle(w);
}

bool Master::push_tasks(TaskArena& records) {
  std::lock_guard<std::mutex> lock(mu_);
  return push_to_spill(records, -1, true);
}

bool Master::push_to_spill(TaskArena& batch, int64_t worker, bool enforce_limit) {
  if (abort_) {
    batch.clear();
    return false;
  }
  if (enforce_limit && spill_.would_exceed(batch.bytes())) {
    JobStatus st;
    st.error = JobError::kSpillLimit;
    st.worker = worker;
    st.message = std::to_string(batch.num_tasks()) + " decomposed tasks (" +
                 std::to_string(batch.bytes()) + " bytes) do not fit in the spill stack S: " +
                 "its limit is " + std::to_string(spill_.limit_bytes()) + " bytes and it holds " +
                 std::to_string(spill_.num_tasks()) + " tasks (" + std::to_string(spill_.bytes()) +
                 " bytes)";
    batch.clear();
    fail(st);
    return false;
  }
  spill_.push_batch(batch);
  publish_spill_size();
  master_cv_.notify_one();
  return true;
}

size_t Master::take_tasks(size_t max_records, TaskArena& out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (abort_ || end_ || max_records == 0) return 0;
  const size_t got = spill_.take(max_records, out);
  publish_spill_size();
  // The job may now be over (every worker idle, nothing left): the master checks.
  master_cv_.notify_one();
  return got;
}

size_t Master::take_vertices(size_t max_vertices, std::vector<int32_t>& out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (abort_ || end_ || max_vertices == 0) return 0;
  size_t got = static_cast<size_t>(deque_.take_front(static_cast<int64_t>(max_vertices), out));
  const size_t more = std::min(max_vertices - got, returned_.size());
  out.insert(out.end(), returned_.begin(), returned_.begin() + static_cast<std::ptrdiff_t>(more));
  returned_.erase(returned_.begin(), returned_.begin() + static_cast<std::ptrdiff_t>(more));
  got += more;
  vertices_taken_ += got;
  // The job may now be over (every worker idle, nothing left): the master checks.
  master_cv_.notify_one();
  return got;
}

size_t Master::unstarted_vertices() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<size_t>(deque_.size()) + returned_.size();
}

void Master::request_tasks(size_t records, double seconds) {
  const auto until = seconds_after(Clock::now(), seconds > 0 ? seconds : 0);
  requested_.store(records, std::memory_order_relaxed);
  request_until_.store(until.time_since_epoch().count(), std::memory_order_relaxed);
}

void Master::return_vertices(const int32_t* vertices, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (vertices[i] < 0 || vertices[i] >= graph_.num_vertices)
      throw std::out_of_range("returned vertex " + std::to_string(vertices[i]) +
                              " is not a vertex of the graph");
  if (n == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (abort_) return;
  returned_.insert(returned_.end(), vertices, vertices + n);
  master_cv_.notify_one();
}

void Master::publish_spill_size() {
  spill_tasks_.store(spill_.num_tasks(), std::memory_order_relaxed);
  spill_bytes_.store(spill_.bytes(), std::memory_order_relaxed);
}

void Master::external_fail(const std::string& message) {
  JobStatus st;
  st.error = JobError::kExternal;
  st.message = message;
  std::lock_guard<std::mutex> lock(mu_);
  fail(st);
}

void Master::give_back(WorkerSlot& slot, size_t next_vertex, size_t next_record) {
  std::lock_guard<std::mutex> lock(mu_);
  if (next_vertex < slot.vertices.size())
    returned_.insert(returned_.end(), slot.vertices.begin() + static_cast<std::ptrdiff_t>(next_vertex),
                     slot.vertices.end());
  if (next_record < slot.tasks.num_tasks()) {
    TaskArena rest;
    for (size_t i = next_record; i < slot.tasks.num_tasks(); ++i) {
      int64_t len = 0;
      const int32_t* rec = slot.tasks.record(i, &len);
      rest.push(rec, len);
    }
    push_to_spill(rest, slot.id, false);  // these records were in S already
  }
  master_cv_.notify_one();
}

void Master::fail(const JobStatus& status) {
  if (status_.error == JobError::kNone) status_ = status;
  abort_ = true;
  master_cv_.notify_one();
}

int64_t Master::take(int64_t n) {
  if (n <= 0) return 0;
  if (config_.limit < 0) return n;
  int64_t left = quota_.load(std::memory_order_relaxed);
  while (left > 0) {
    const int64_t got = std::min(n, left);
    if (quota_.compare_exchange_weak(left, left - got, std::memory_order_relaxed)) {
      if (got == left) {  // the last one: stop the job, keeping what was found
        JobStatus st;
        st.error = JobError::kLimit;
        st.message = "stopped after " + std::to_string(config_.limit) + " results (limit)";
        std::lock_guard<std::mutex> lock(mu_);
        fail(st);
      }
      return got;
    }
  }
  return 0;
}

void Master::stop(const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (end_) return;  // over (or being destroyed): leave its status alone
  JobStatus st;
  st.error = JobError::kStopped;
  st.message = message;
  fail(st);
}

void Master::fail_out_of_memory(const WorkerContext& ctx, const char* what) {
  JobStatus st;
  st.error = JobError::kMemory;
  st.worker = ctx.header[kWorkerId];
  st.message = std::string("out of memory while ") + what;
  std::lock_guard<std::mutex> lock(mu_);
  fail(st);
}

void Master::write_results(WorkerContext& ctx) {
  const bool ok = writer_->write(ctx.emit_buf);
  ctx.emit_buf.clear();
  if (!ok) fail_output();
}

void Master::fail_output() {
  const int err = writer_->error();
  JobStatus st;
  st.error = JobError::kOutput;
  st.code = err;
  st.message = err == EPIPE ? "the reader of '" + config_.output +
                                  "' closed it before every result was written (broken pipe)"
                            : "writing results to '" + config_.output +
                                  "' failed: " + std::strerror(err);
  std::lock_guard<std::mutex> lock(mu_);
  // A job that ended on request (limit, stop) but could not write its results failed.
  if (status_.error == JobError::kLimit || status_.error == JobError::kStopped)
    status_ = JobStatus{};
  fail(st);
}

bool Master::flush(WorkerContext& ctx) {
  if (ctx.out.empty()) return true;
  std::lock_guard<std::mutex> lock(mu_);
  return push_to_spill(ctx.out, ctx.header[kWorkerId], true);
}

bool Master::check_time(WorkerContext& ctx) {
  ctx.header[kCountdown] = ctx.countdown_reset;
  const auto now = Clock::now();
  // Demand-driven splitting: a heavy task deep in a search tree would otherwise
  // hand out one level of work per time budget while other cores starve (the
  // critical path becomes depth x budget). When a worker is idle and S is empty,
  // tasks split after early_split seconds instead of the full budget.
  // An idle GPU worker counts too, after gpu_idle_split: split work is what it
  // steals from S, and it would finish a task's rest far sooner than one core.
  // Another job (a node of a cluster) waiting for tasks of this one counts too
  // (request_tasks), until S holds the records it asked for.
  const size_t spilled = spill_tasks_.load(std::memory_order_relaxed);
  const bool s_empty = spilled == 0;
  const bool requested = spilled < requested_.load(std::memory_order_relaxed) &&
                         now.time_since_epoch().count() <
                             request_until_.load(std::memory_order_relaxed);
  const bool cpu_starving =
      (s_empty && idle_cpu_.load(std::memory_order_relaxed) > 0) || requested;
  const bool gpu_starving = s_empty && idle_external_.load(std::memory_order_relaxed) > 0;
  if (abort_.load(std::memory_order_relaxed) || now >= ctx.deadline ||
      (cpu_starving && now >= ctx.early_deadline) ||
      (gpu_starving && now >= ctx.gpu_early_deadline)) {
    ctx.header[kTimedOut] = 1;
    return true;
  }
  return false;
}

void Master::cpu_worker_loop(WorkerSlot& slot, WorkerContext& ctx) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    auto wait_start = Clock::now();
    slot.cv.wait(lock, [&] { return slot.has_work || end_; });
    ctx.stats.idle_seconds += seconds_since(wait_start);
    if (!slot.has_work) break;  // end_ and nothing assigned
    lock.unlock();
    auto busy_start = Clock::now();
    process_assignment(slot, ctx);
    ctx.stats.busy_seconds += seconds_since(busy_start);
    if (writer_ && !ctx.emit_buf.empty()) write_results(ctx);
    lock.lock();
    slot.vertices.clear();
    slot.tasks.clear();
    // Fast path: while V or S has work, a finishing worker takes its next
    // assignment itself (same policy as the master's), sparing the two
    // thread wake-ups of a round trip through W. Only a worker that finds
    // nothing enters W and sleeps until the master hands it work.
    if (!abort_ && has_cpu_work()) {
      assign(slot);
      continue;
    }
    go_idle(slot);
  }
}

bool Master::finish_task(WorkerContext& ctx, int32_t rc, int64_t vertex) {
  int64_t code = rc != 0 ? rc : ctx.header[kError];
  if (code == kOk) {
    if (!ctx.out.empty()) flush(ctx);
    if (writer_ && ctx.emit_buf.size() > (size_t(1) << 20)) write_results(ctx);
    return !abort_;
  }
  ctx.out.clear();
  JobStatus st;
  st.error = JobError::kUser;
  st.code = code;
  st.worker = ctx.header[kWorkerId];
  st.vertex = vertex;
  std::lock_guard<std::mutex> lock(mu_);
  fail(st);
  return false;
}

void Master::process_assignment(WorkerSlot& slot, WorkerContext& ctx) {
  void* raw = &ctx;
  const auto give_back_after = seconds_after(Clock::now(), config_.time_budget);
  for (size_t i = 0; i < slot.vertices.size(); ++i) {
    if (abort_) return;
    if (i > 0 && Clock::now() > give_back_after) {
      give_back(slot, i, 0);
      return;
    }
    const int32_t v = slot.vertices[i];
    ctx.begin_task(config_.time_budget, config_.early_split, config_.gpu_idle_split);
    int32_t rc = entry_(raw, v, nullptr, 0);
    ctx.stats.vertices.add();
    if (!finish_task(ctx, rc, v)) return;
  }
  for (size_t i = 0; i < slot.tasks.num_tasks(); ++i) {
    if (abort_) return;
    if (i > 0 && Clock::now() > give_back_after) {
      give_back(slot, slot.vertices.size(), i);
      return;
    }
    int64_t len = 0;
    const int32_t* rec = slot.tasks.record(i, &len);
    ctx.begin_task(config_.time_budget, config_.early_split, config_.gpu_idle_split);
    int32_t rc = entry_(raw, -1, rec, len);
    ctx.stats.records.add();
    if (!finish_task(ctx, rc, -1)) return;
  }
}

}  // namespace gthinker
