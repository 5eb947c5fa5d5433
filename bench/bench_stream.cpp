// Decode speed of one expert-streaming configuration on one model, with every
// number the ablation table needs and the bounds measured in the same process.
// bench/stream_ablation.py runs it once per configuration (a fresh process,
// page cache dropped, optionally inside a memory cgroup) and builds the table.
//
//   bench_stream --model PATH [--resident | --budget-mb N] [--prefetch-c N]
//                [--no-ready-first] [--io auto|io_uring|pread] [--eviction lru|lfu_aged]
//                [--buffered] [--prompt N] [--warmup N] [--tokens N] [--threads N]
//                [--disk-probe-mib N] [--warm-file] [--prefill-warmup] [--prefill-reps N]
//                [--feed random|greedy] [--json]
//
// Run:
//  1. Bounds, before the model runs: memory-read bandwidth (bench_support.h,
//     --threads threads) and disk-read bandwidth, the better of two probes of
//     --disk-probe-mib MiB each: O_DIRECT reads of one expert slot's size (the
//     bytes a contiguous expert read moves) at random 4 KiB-aligned offsets of
//     the model file, 16 in flight, through the configured I/O backend; and
//     sequential O_DIRECT 8 MiB preads from the file's start.
//  2. Prefill of --prompt tokens (fixed ids spread over the vocabulary; with
//     --prefill-warmup decoded once untimed first and the context reset, so the
//     timed prefill finds the weights' pages mapped, like llama-bench; with
//     --prefill-reps N the timed prefill runs N times, the context reset between,
//     and the median is reported: long enough to profile), then
//     --warmup decode steps that fill the cache (not timed), then the
//     scheduler's counters are reset and --tokens decode steps are timed. Each
//     step decodes one token: a fixed-seed random id (--feed random, default:
//     a random-weight model's greedy output repeats one token, so its routing
//     would never change) or the previous step's argmax (--feed greedy).
//  3. Per decoded token: tok/s; bytes read from the file; hit rate; predictor
//     recall (mean over layers 1..L-1, and layer 0 alone); I/O wait share =
//     time compute waited on reads / decode time; prefetched bytes never used;
//     touched bytes (dense tensors + one token_embd row + the expert matrices
//     the router selected); missed-expert bytes = the matrices of the experts
//     used that were not in the cache before (demand reads + first uses of
//     prefetched experts).
//  4. Bound for this run (tok/s) = 1 / max(missed bytes / disk bandwidth,
//     touched bytes / memory bandwidth, compute time per token). The compute
//     time per token with every expert resident comes from a --resident run of
//     the same model and is passed back in with --compute-s-per-token (the
//     driver does this); without it that term is left out and said so.
//  --resident: experts from the model's mmap (no streaming); --warm-file reads
//  the whole file once first so every page is in the page cache.
// Over the timed decode it reports CPU use: this process's user and system
// seconds, run-queue wait and other CPU use per token, and the window in
// CLOCK_MONOTONIC seconds for `perf report --time` (record with `-k mono`).
// Peak RSS (getrusage) is reported at the end. It measures and prints; it
// asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "bench_support.h"
#include "core/model/context.h"
#include "core/gguf/gguf_reader.h"
#include "core/model/model.h"
#include "io/aligned_bytes.h"
#include "io/io_factory.h"
#include "sched/slot_layout.h"
#include "sched/context_factory.h"
#include "trace/process_usage.h"

namespace {

using les::bench::Clock;
using les::bench::seconds_since;

struct Args {
  std::string model;
  bool resident = false;
  double budget_mb = 0;
  int32_t prefetch_c = -1;
  bool no_ready_first = false;
  std::string io = "auto";
  std::string eviction = "lfu_aged";
  bool buffered = false;
  int prompt = 16, warmup = 4, tokens = 32, threads = 2;
  double disk_probe_mib = 512;
  double compute_s_per_token = 0;
  bool warm_file = false;
  bool prefill_warmup = false;
  int prefill_reps = 1;
  std::string feed = "random";
  bool json = false;
};

int fail(const std::string& what, const les::Status& s) {
  std::fprintf(stderr, "bench_stream: %s: %s\n", what.c_str(), s.to_string().c_str());
  return 1;
}

// Random O_DIRECT reads of `read_bytes` at 4 KiB-aligned offsets of `path`,
// `qd` in flight, `total` bytes in all. Returns bytes/s.
les::Result<double> disk_bandwidth(const std::string& path, les::io::IoBackendKind kind, size_t read_bytes,
                                   uint32_t qd, uint64_t total) {
  les::io::IoOptions o;
  o.queue_depth = qd;
  o.use_direct_io = true;
  LES_ASSIGN_OR_RETURN(auto backend, les::io::create_io_backend(kind, o));
  LES_ASSIGN_OR_RETURN(les::io::FileId f, backend->open_file(path));
  LES_ASSIGN_OR_RETURN(les::io::FileInfo info, backend->file_info(f));
  if (info.size_bytes < read_bytes + 4096) return les::invalid_argument_error("disk probe: file too small");
  std::vector<les::io::AlignedBytes> bufs;
  for (uint32_t i = 0; i < qd; ++i) {
    LES_ASSIGN_OR_RETURN(auto b, les::io::AlignedBytes::allocate(read_bytes, 4096));
    bufs.push_back(std::move(b));
  }
  std::mt19937_64 rng(12345);
  const uint64_t n_pages = (info.size_bytes - read_bytes) / 4096;
  auto request = [&](uint32_t i) {
    les::io::ReadRequest r;
    r.tag = i;
    r.file = f;
    r.offset = (rng() % n_pages) * 4096;
    r.length = read_bytes;
    r.dst = bufs[i].data();
    return r;
  };
  const uint64_t n_reads = std::max<uint64_t>(total / read_bytes, qd);
  uint64_t submitted = 0, done = 0;
  std::vector<les::io::ReadCompletion> comps;
  const auto t0 = Clock::now();
  for (uint32_t i = 0; i < qd && submitted < n_reads; ++i, ++submitted) {
    const les::io::ReadRequest r = request(i);
    LES_RETURN_IF_ERROR(backend->submit({&r, 1}));
  }
  while (done < n_reads) {
    comps.clear();
    LES_RETURN_IF_ERROR(backend->reap(1, les::io::kWaitForever, comps));
    for (const auto& c : comps) {
      if (!c.status.ok()) return c.status;
      ++done;
      if (submitted < n_reads) {
        const les::io::ReadRequest r = request(static_cast<uint32_t>(c.tag));
        LES_RETURN_IF_ERROR(backend->submit({&r, 1}));
        ++submitted;
      }
    }
  }
  return static_cast<double>(n_reads * read_bytes) / seconds_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Decode speed of one expert-streaming configuration (see bench/stream_ablation.py)"};
  app.add_option("--model", a.model, "GGUF model file")->required();
  app.add_flag("--resident", a.resident, "experts from the mmap, no streaming (the compute-time reference)");
  app.add_option("--budget-mb", a.budget_mb, "expert cache budget in MiB (streaming)");
  app.add_option("--prefetch-c", a.prefetch_c, "lookahead candidates per token: 0 = on-demand reads only");
  app.add_flag("--no-ready-first", a.no_ready_first, "wait for all of a layer's experts before computing");
  app.add_option("--io", a.io, "I/O backend: auto, io_uring, pread");
  app.add_option("--eviction", a.eviction, "lru or lfu_aged");
  app.add_flag("--buffered", a.buffered, "no O_DIRECT for expert reads");
  app.add_option("--prompt", a.prompt, "prompt tokens")->check(CLI::Range(1, 4096));
  app.add_option("--warmup", a.warmup, "untimed decode steps")->check(CLI::Range(0, 4096));
  app.add_option("--tokens", a.tokens, "timed decode steps")->check(CLI::Range(1, 4096));
  app.add_option("--threads", a.threads, "compute threads")->check(CLI::Range(1, 256));
  app.add_option("--disk-probe-mib", a.disk_probe_mib, "MiB read by the disk-bandwidth probe");
  app.add_option("--compute-s-per-token", a.compute_s_per_token,
                 "compute time per token with every expert resident (from a --resident run)");
  app.add_flag("--warm-file", a.warm_file, "read the whole file first (page cache)");
  app.add_flag("--prefill-warmup", a.prefill_warmup,
               "decode the prompt once untimed first (then reset the context), as llama-bench's warm-up run does");
  app.add_option("--prefill-reps", a.prefill_reps, "timed prefills (context reset between); the median is reported")
      ->check(CLI::Range(1, 10000));
  app.add_option("--feed", a.feed, "decode input: random (fixed-seed token ids) or greedy")
      ->check(CLI::IsMember({"random", "greedy"}));
  app.add_flag("--json", a.json, "print one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the message (and the usage for --help)
    if (code != 0) std::fprintf(stderr, "%s", app.help().c_str());
    return code == 0 ? 0 : 2;
  }

  auto io_kind = les::io::parse_io_backend_kind(a.io == "auto" ? "automatic" : a.io);
  if (!io_kind.ok()) return fail("--io", io_kind.status());
  auto policy = les::sched::parse_eviction_policy(a.eviction);
  if (!policy.ok()) return fail("--eviction", policy.status());
  if (a.warm_file) les::bench::warm_page_cache(a.model);

  les::ModelParams mp;
  mp.n_threads = a.threads;
  auto model = les::Model::load(a.model, mp);
  if (!model.ok()) return fail("loading " + a.model, model.status());
  const les::Model& m = **model;
  const les::Hparams& hp = m.hparams();
  auto layout = les::sched::SlotLayout::from_model(m, 4096);
  if (!layout.ok()) return fail("expert layout", layout.status());

  // Dense bytes every token reads: all tensors except routed experts, token_embd as one row.
  uint64_t dense = 0;
  for (const auto& t : m.file().tensors()) {
    const std::string& n = t.name;
    const bool expert = n.rfind("blk.", 0) == 0 && (n.find("_exps") != std::string::npos);
    if (expert) continue;
    dense += n == "token_embd.weight" ? t.row_bytes() : t.n_bytes;
  }

  const double mem_bw = les::bench::read_bandwidth(a.threads);
  // The disk bound is the better of two probes: random reads of one expert
  // slot's size, 16 in flight (the engine's access pattern), and sequential
  // 8 MiB reads (the device's streaming rate).
  const uint64_t probe_bytes = static_cast<uint64_t>(a.disk_probe_mib * 1024 * 1024);
  auto disk_random = disk_bandwidth(a.model, *io_kind, layout->slot_bytes(), 16, probe_bytes);
  if (!disk_random.ok()) return fail("disk probe", disk_random.status());
  const double disk_seq = les::bench::sequential_read_bandwidth(a.model, probe_bytes, 1);
  if (disk_seq <= 0) return fail("disk probe", les::io_error("no sequential O_DIRECT read of " + a.model));
  const les::Result<double> disk_bw = std::max(*disk_random, disk_seq);

  les::ContextParams cp;
  cp.n_threads = a.threads;
  cp.n_ctx = a.prompt + a.warmup + a.tokens + 8;
  cp.n_batch = a.prompt;
  les::sched::StreamingParams sp;  // budget 0: resident
  if (!a.resident) {
    // A streaming run needs a budget: 0 is refused (not silently resident).
    sp.budget_bytes = std::max<size_t>(1, static_cast<size_t>(a.budget_mb * 1024.0 * 1024.0));
    sp.prefetch_c = a.prefetch_c;
    sp.io = *io_kind;
    sp.policy = *policy;
    sp.use_direct_io = !a.buffered;
    sp.ready_first = !a.no_ready_first;
    if (a.prefetch_c == 0) sp.layer0 = les::sched::Layer0Lookahead::none;
  }
  auto ctx = les::sched::create_context(m, cp, sp);
  if (!ctx.ok()) return fail("context", ctx.status());
  les::Context& c = **ctx;
  les::sched::StreamingExpertSource* src = les::sched::streaming_source(c);
  uint64_t touched_expert_bytes = 0;
  bool counting = false;
  c.set_router_observer([&](const les::RouterObservation& o) {
    if (!counting) return;
    for (int32_t i = 0; i < o.n_tokens * o.n_expert_used; ++i) touched_expert_bytes += layout->expert_bytes(o.layer);
  });

  std::vector<int32_t> prompt(static_cast<size_t>(a.prompt));
  for (int i = 0; i < a.prompt; ++i)
    prompt[static_cast<size_t>(i)] =
        static_cast<int32_t>((7919ull * static_cast<uint64_t>(i + 1)) % static_cast<uint64_t>(hp.n_vocab));
  if (a.prefill_warmup) {
    if (auto s = c.decode(prompt); !s.ok()) return fail("prefill warm-up", s);
    c.reset();
    if (src) src->reset_stats();
  }
  std::vector<double> prefill_times;
  for (int r = 0; r < a.prefill_reps; ++r) {
    if (r > 0) {
      c.reset();
      if (src) src->reset_stats();
    }
    auto t0 = Clock::now();
    if (auto s = c.decode(prompt); !s.ok()) return fail("prefill", s);
    prefill_times.push_back(seconds_since(t0));
  }
  std::vector<double> sorted_times = prefill_times;
  std::sort(sorted_times.begin(), sorted_times.end());
  const double prefill_s = sorted_times[sorted_times.size() / 2];
  const double prefill_bytes = src ? static_cast<double>(src->stats().bytes_read) : 0.0;

  // Greedy decoding of a random-weight model soon repeats one token, and so
  // one routing: every expert a hit. --feed random (the default) feeds
  // fixed-seed token ids instead (teacher-forced), so routing varies from
  // token to token as it does on real text; the work per token is the same.
  std::mt19937 feed_rng(777);
  auto greedy_step = [&]() -> les::Status {
    int32_t one[1];
    if (a.feed == "greedy") {
      auto lg = c.logits();
      one[0] = static_cast<int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin());
    } else {
      one[0] = static_cast<int32_t>(feed_rng() % static_cast<uint32_t>(hp.n_vocab));
    }
    return c.decode(one);
  };
  for (int i = 0; i < a.warmup; ++i)
    if (auto s = greedy_step(); !s.ok()) return fail("warm-up decode", s);
  if (src) src->reset_stats();
  counting = true;
  double decode_s = 0;
  const les::trace::ProcessUsage u0 = les::trace::process_usage_now();
  const auto window0 = Clock::now();
  for (int i = 0; i < a.tokens; ++i) {
    const auto t0 = Clock::now();
    if (auto s = greedy_step(); !s.ok()) return fail("decode", s);
    decode_s += seconds_since(t0);
  }
  const auto window1 = Clock::now();
  const les::trace::ProcessUsage u1 = les::trace::process_usage_now();
  counting = false;

  const double n = a.tokens;
  const double tok_s = n / decode_s;
  const double touched = static_cast<double>(dense) + static_cast<double>(touched_expert_bytes) / n;
  nlohmann::json out;
  out["model"] = a.model.substr(a.model.find_last_of('/') + 1);
  out["contiguous_layout"] = layout->contiguous();
  out["resident"] = a.resident;
  out["threads"] = a.threads;
  out["n_expert"] = hp.n_expert;
  out["n_expert_used"] = hp.n_expert_used;
  out["n_layer"] = hp.n_layer;
  out["expert_bytes_layer0"] = layout->expert_bytes(hp.n_layer > 1 ? 1 : 0);
  out["dense_bytes_per_token"] = dense;
  out["prompt_tokens"] = a.prompt;
  out["warmup_tokens"] = a.warmup;
  out["decode_tokens"] = a.tokens;
  out["feed"] = a.feed;
  out["prefill_warmup"] = a.prefill_warmup;
  out["prefill_s"] = prefill_s;
  out["prefill_reps"] = a.prefill_reps;
  out["prefill_s_all"] = prefill_times;
  out["prefill_tok_per_s"] = a.prompt / prefill_s;
  out["decode_s"] = decode_s;
  out["decode_tok_per_s"] = tok_s;
  out["memory_read_bandwidth_bytes_per_s"] = mem_bw;
  out["disk_read_bandwidth_bytes_per_s"] = *disk_bw;
  out["disk_random_read_bandwidth_bytes_per_s"] = *disk_random;
  out["disk_sequential_read_bandwidth_bytes_per_s"] = disk_seq;
  out["touched_bytes_per_token"] = touched;
  out["load_average_1min"] = les::bench::load_average();
  // CPU use over the timed decode steps: this process's user and system time,
  // its threads' run-queue wait, and every other CPU use of the machine (other
  // processes, and kernel work not charged to this process, such as interrupts
  // taken while idle).
  out["cpu_user_s_per_token"] = (u1.user - u0.user) / a.tokens;
  out["cpu_sys_s_per_token"] = (u1.sys - u0.sys) / a.tokens;
  out["run_queue_wait_s_per_token"] = std::max(0.0, u1.run_delay - u0.run_delay) / a.tokens;
  out["other_cpu_s_per_token"] =
      std::max(0.0, (u1.machine_busy - u0.machine_busy) - (u1.user - u0.user) - (u1.sys - u0.sys)) / a.tokens;
  out["involuntary_switches_per_token"] = static_cast<double>(u1.involuntary_switches - u0.involuntary_switches) /
                                          a.tokens;
  // The timed decode as steady_clock (CLOCK_MONOTONIC on Linux) seconds: the
  // window to give `perf report --time` for a `perf record -k mono` profile.
  out["decode_window_monotonic_s"] = {std::chrono::duration<double>(window0.time_since_epoch()).count(),
                                      std::chrono::duration<double>(window1.time_since_epoch()).count()};
  double t_mem = touched / mem_bw, t_disk = 0;
  if (src) {
    const les::sched::SchedStats& s = src->stats();
    // Bytes the disk had to deliver for experts this run used: demand reads
    // plus prefetched experts at their first use (the expert matrices alone,
    // no alignment padding and no wasted prefetches).
    double missed = 0;
    for (size_t l = 0; l < s.layers.size(); ++l)
      missed += static_cast<double>(s.layers[l].misses + s.layers[l].prefetch_hits) *
                static_cast<double>(layout->expert_bytes(static_cast<int32_t>(l)));
    missed /= n;
    t_disk = missed / *disk_bw;
    double r0 = s.layers.empty() ? 0.0 : s.layers[0].recall();
    out["io_backend"] = src->backend_name();
    out["budget_bytes"] = src->budget_bytes();
    out["n_slots"] = src->n_slots();
    out["registered_slots"] = src->registered_slots();
    out["prefetch_c"] = src->prefetch_c();
    out["ready_first"] = !a.no_ready_first;
    out["eviction"] = a.eviction;
    out["prefill_bytes_read_per_token"] = prefill_bytes / a.prompt;
    out["bytes_read_per_token"] = static_cast<double>(s.bytes_read) / n;
    out["missed_expert_bytes_per_token"] = missed;
    out["prefetch_unused_bytes_per_token"] = static_cast<double>(s.prefetch_unused_bytes) / n;
    out["prefetch_experts_per_token"] = static_cast<double>(s.prefetch_experts) / n;
    out["prefetch_used_experts_per_token"] = static_cast<double>(s.prefetch_hits()) / n;
    out["demand_experts_per_token"] = static_cast<double>(s.demand_experts) / n;
    out["reads_per_token"] = static_cast<double>(s.reads_issued) / n;
    out["hit_rate"] = s.hit_rate();
    out["recall_mean_layers_1_plus"] = s.mean_recall(1);
    out["recall_layer0"] = r0;
    out["io_wait_s_per_token"] = s.io_wait_s / n;
    out["io_wait_share"] = s.io_wait_s / decode_s;
    out["io_idle_share"] = s.io_idle_s / std::max(s.wall_s, 1e-12);
  }
  out["bound_terms_s_per_token"] = {{"disk", t_disk}, {"memory", t_mem}, {"compute", a.compute_s_per_token}};
  const double t_bound = std::max({t_disk, t_mem, a.compute_s_per_token});
  out["bound_tok_per_s"] = 1.0 / t_bound;
  out["bound_includes_compute"] = a.compute_s_per_token > 0;
  out["fraction_of_bound"] = tok_s * t_bound;
  out["peak_rss_bytes"] = les::bench::peak_rss_bytes();
  if (a.json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("%s: decode %.3f tok/s (bound %.3f: disk %.3f s, memory %.3f s, compute %.3f s per token)\n",
                out["model"].get<std::string>().c_str(), tok_s, 1.0 / t_bound, t_disk, t_mem,
                a.compute_s_per_token);
    std::printf("%s\n", out.dump().c_str());
  }
  return 0;
}
