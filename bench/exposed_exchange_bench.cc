// How much of the gradient exchange a data-parallel training step still waits for once backward
// has overlapped what it can, against one raw Gloo allreduce of the same gradient bytes.
//
// Two ranks run as two processes (this program forks itself before any thread starts), each the
// Worker that `cohort worker` assembles (Worker::Create) for an experiment with optimizations at
// their defaults, joined into a Gloo group over loopback TCP through a RendezvousStore kept as
// files in a temporary folder. Each rank drives the real `mlp` plugin through the worker's model,
// sized to a 7.45 MB float32 gradient (32 inputs, two hidden layers of 1343, 10 classes:
// 1,862,751 parameters), 32 records per rank per step (global batch 64), and takes the steps
// TrialRunner takes for every batch:
//
//   sampler batch -> [Begin(1/2, step)] -> train_batch (gradients_ready fires layer by layer
//   during backward) -> [Finish] -> built-in SGD step -> zero the gradients
//
// The exchange is the worker's GradientExchange over its Gloo group, with the buckets of the
// default optimizations (tensor_fusion_threshold 64 MB, a first bucket of at most 1 MB). Three
// sides each take one sample per round, in rotating order, for ROUNDS rounds after a few untimed
// ones:
//
//   with_exchange       one step as above
//   without_exchange    one step with Begin and Finish left out (the hook still runs and does
//                       nothing, as for a batch that only accumulates)
//   raw_gloo_allreduce  one AllreduceSum of the Gloo backend (gloo::allreduce underneath) on a
//                       separate float32 buffer of as many bytes as the exchange's buckets cover;
//                       the buffer is refilled untimed and its sum checked after the call
//
// Every sample starts when both ranks leave a barrier (a byte each way over a socket pair, so no
// Gloo traffic reaches a rank between samples) and a round's sample of a side is the slower
// rank's: the time the group takes. So without_exchange is the slower rank's compute alone, and
// what with_exchange adds to it is the exchange, not the two ranks' imbalance. One sample per
// side per round, with a barrier before each, lets a change in the machine's load (and in how
// the scheduler treats a process that sleeps now and then) fall on the sides alike. The figure:
//   exposed_exchange_per_step = median(with_exchange) - median(without_exchange)
// against the median raw allreduce; PyTorch DDP with Gloo exposes 1.6x for this gradient size
// (10.1 ms exposed per step against 6.2 ms for the raw allreduce).
//
// This machine has 2 cores for 2 processes, and each process runs a training thread, the
// exchange's communication thread and Gloo's I/O thread: while backward computes, the first
// bucket's exchange competes with the two training threads for the two cores, so less of the
// exchange can be hidden than on a machine with a core to spare per rank, and any other load on
// the machine lands on the critical path (the load averages go to stderr; with other work
// running the figure is not meaningful). With these buckets the first 1 MB bucket holds only the
// last layer; the hidden layer's 7.2 MB weight joins the second bucket, which becomes ready only
// when backward reaches the first layer, so most of the exchange is exposed by construction of
// the plan, whatever the core count.
//
//   exposed_exchange_bench MLP_PLUGIN_PATH [ROUNDS=120]
//
// Prints one JSON line {"name": "exposed_exchange_per_step", "value" (ms), "unit": "ms",
// "peer": "raw_gloo_allreduce", "peer_value" (ms), "ratio" (value / peer_value)}; every sample,
// the medians, the bucket plan and the load averages go to stderr.
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/collective/rendezvous_store.h"
#include "runtime/config/experiment_config.h"
#include "runtime/exchange/gradient_exchange.h"
#include "runtime/plugin/loaded_model.h"
#include "runtime/trial/record_sampler.h"
#include "runtime/trial/trial_events.h"
#include "runtime/trial/trial_runner.h"
#include "runtime/worker/worker.h"

namespace {

constexpr uint32_t kRanks = 2;
constexpr uint64_t kPerRankBatch = 32;
constexpr float kRawFill = 1.5f;  // every raw allreduce sums kRawFill from each rank
constexpr int kUntimedRounds = 3;

// Each side's samples in milliseconds, one per round.
struct Samples {
  std::vector<double> with_exchange, without_exchange, raw_allreduce;
};

double NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The machine's load averages over 1, 5 and 15 minutes, as /proc/loadavg gives them.
std::string LoadAverages() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "unknown";
  return absl::StrCat(one, " ", five, " ", fifteen);
}

// A RendezvousStore shared by processes through files in one folder: a key's value is a file named
// after the key's hex, written under a temporary name and renamed into place, so a reader sees
// either nothing or the whole value. Safe for any number of threads and processes.
class FolderRendezvousStore final : public cohort::RendezvousStore {
 public:
  explicit FolderRendezvousStore(std::filesystem::path folder) : folder_(std::move(folder)) {}

  absl::Status Set(const std::string& key, const std::string& value) override {
    const std::filesystem::path final_path = PathOf(key);
    const std::filesystem::path partial =
        absl::StrCat(final_path.string(), ".partial-", ::getpid());
    {
      std::ofstream out(partial, std::ios::binary | std::ios::trunc);
      out.write(value.data(), static_cast<std::streamsize>(value.size()));
      if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write ", partial.string()));
    }
    std::error_code error;
    std::filesystem::rename(partial, final_path, error);
    if (error) {
      return absl::InternalError(absl::StrCat("rendezvous key ", key, ": ", error.message()));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Get(const std::string& key,
                                  std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const std::filesystem::path path = PathOf(key);
    for (;;) {
      std::ifstream in(path, std::ios::binary);
      if (in) return std::string(std::istreambuf_iterator<char>(in), {});
      if (std::chrono::steady_clock::now() >= deadline) {
        return absl::DeadlineExceededError(
            absl::StrCat("rendezvous key ", key, " not set within ", timeout.count(), " ms"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

 private:
  std::filesystem::path PathOf(const std::string& key) const {
    return folder_ / absl::BytesToHexString(key);
  }

  std::filesystem::path folder_;
};

// The experiment: the mlp plugin at the benchmark's size with plain SGD, optimizations left at
// their defaults, long enough that the steps taken never reach its end.
constexpr char kExperiment[] = R"(
name: exposed-exchange-bench
entrypoint: mlp
hyperparameters:
  global_batch_size: 64
  optimizer: sgd
  learning_rate: 0.01
  hidden_size: 1343    # 32*1343 + 1343 + 1343^2 + 1343 + 1343*10 + 10 parameters
  hidden_layers: 2
searcher:
  name: single
  metric: validation_loss
  max_length: {batches: 1000000}
reproducibility:
  experiment_seed: 7
)";
constexpr uint64_t kTrialId = 1;

// A rank reports nothing: the benchmark drives the steps itself and never runs the trial loop.
class NoEvents final : public cohort::TrialEvents {
 public:
  void OnMetrics(const cohort::MetricsReport&) override {}
  void OnProgress(const cohort::ProgressReport&) override {}
  void OnCheckpoint(const cohort::CheckpointReport&) override {}
  bool StopRequested() override { return false; }
};

// Everything one rank holds: the worker `cohort worker` assembles for the experiment, and a sampler
// of the records its trial loop would take.
class RankTraining {
 public:
  static absl::StatusOr<std::unique_ptr<RankTraining>> Create(uint32_t rank,
                                                              const std::string& plugin_path,
                                                              const std::string& checkpoint_root,
                                                              cohort::RendezvousStore& store) {
    std::unique_ptr<RankTraining> self(new RankTraining());
    absl::StatusOr<cohort::ExperimentConfig> config = cohort::ParseExperimentConfig(kExperiment);
    if (!config.ok()) return config.status();
    const uint64_t trial_seed = cohort::TrialSeed(*config->experiment_seed, kTrialId);
    cohort::WorkerOptions options;
    options.config = *std::move(config);
    options.plugin = plugin_path;
    options.checkpoint_root = checkpoint_root;
    options.trial_id = kTrialId;
    options.rank = rank;
    options.size = kRanks;
    options.rendezvous = &store;
    options.group_prefix = "exposed-exchange-bench";
    options.events = &self->events_;
    absl::StatusOr<std::unique_ptr<cohort::Worker>> worker =
        cohort::Worker::Create(std::move(options));
    if (!worker.ok()) return worker.status();
    self->worker_ = *std::move(worker);
    if (self->worker_->optimizer() == nullptr || self->worker_->exchange() == nullptr) {
      return absl::InternalError("the worker has no built-in optimizer or no exchange");
    }
    absl::StatusOr<uint64_t> records = self->worker_->model().DatasetSize(COHORT_SPLIT_TRAINING);
    if (!records.ok()) return records.status();
    self->sampler_ = std::make_unique<cohort::RecordSampler>(*records, trial_seed,
                                                             kPerRankBatch * kRanks, rank, kRanks);
    return self;
  }

  // One training step, exchanged or not.
  absl::Status Step(bool exchanged) {
    cohort::GradientExchange& exchange = *worker_->exchange();
    cohort::LoadedModel& model = worker_->model();
    const cohort::BatchSpec batch = sampler_->TrainingBatch(batches_trained_);
    if (exchanged) exchange.Begin(1.0 / kRanks, batches_trained_);
    absl::StatusOr<cohort::BatchMetrics> metrics = model.TrainBatch(batch);
    if (exchanged) {
      // Finish even after a failed batch, so both ranks still run the same collectives.
      absl::Status summed = exchange.Finish();
      if (metrics.ok() && !summed.ok()) return summed;
    }
    if (!metrics.ok()) return metrics.status();
    if (absl::Status s = worker_->optimizer()->Step(); !s.ok()) return s;
    if (absl::Status s = model.arena().ZeroGradients(); !s.ok()) return s;
    ++batches_trained_;
    return absl::OkStatus();
  }

  // Elements the exchange sums per step: its buckets' ranges, alignment gaps included.
  uint64_t exchanged_elements() {
    uint64_t elements = 0;
    for (const cohort::GradientBucket& bucket : worker_->exchange()->plan()) {
      elements += bucket.count;
    }
    return elements;
  }

  std::string DescribePlan() {
    std::string text;
    for (const cohort::GradientBucket& bucket : worker_->exchange()->plan()) {
      absl::StrAppend(&text, text.empty() ? "" : ", ", bucket.tensors.size(), " tensors in ",
                      absl::StrFormat("%.3f", bucket.count * sizeof(float) / 1e6), " MB");
    }
    return text;
  }

  cohort::CollectiveBackend& backend() { return *worker_->gradient_collective(); }

 private:
  RankTraining() = default;

  NoEvents events_;
  std::unique_ptr<cohort::Worker> worker_;
  std::unique_ptr<cohort::RecordSampler> sampler_;
  uint64_t batches_trained_ = 0;
};

// The two ranks' meeting point for aligning samples, outside Gloo (a message to a peer that is
// still computing would wake that peer's Gloo I/O thread in the middle of a timed step): one end
// of a socket pair per process, a Barrier being one byte each way.
class PeerBarrier {
 public:
  explicit PeerBarrier(int socket) : socket_(socket) {}

  // Returns once the peer has called Barrier as many times as this process has.
  absl::Status Barrier() {
    char byte = 0;
    if (::write(socket_, &byte, 1) != 1 || ::read(socket_, &byte, 1) != 1) {
      return absl::UnavailableError("the peer process has gone");
    }
    return absl::OkStatus();
  }

 private:
  int socket_;
};

// Milliseconds from the return of a Barrier to the return of `run`.
absl::StatusOr<double> TimeFromBarrier(PeerBarrier& barrier,
                                       const std::function<absl::Status()>& run) {
  if (absl::Status s = barrier.Barrier(); !s.ok()) return s;
  const double start = NowMs();
  if (absl::Status s = run(); !s.ok()) return s;
  return NowMs() - start;
}

// One raw allreduce of `buffer`, timed from a Barrier; the buffer is filled before and its sum
// checked after, untimed.
absl::StatusOr<double> TimeRawAllreduce(PeerBarrier& barrier, cohort::CollectiveBackend& backend,
                                        std::vector<float>& buffer) {
  std::fill(buffer.begin(), buffer.end(), kRawFill);
  absl::StatusOr<double> ms = TimeFromBarrier(barrier, [&] {
    return backend.AllreduceSum(buffer.data(), buffer.size(), COHORT_DTYPE_FLOAT32);
  });
  if (ms.ok() && (buffer.front() != kRawFill * kRanks || buffer.back() != kRawFill * kRanks)) {
    return absl::InternalError(absl::StrCat("raw allreduce summed to ", buffer.front(), " .. ",
                                            buffer.back(), ", expected ", kRawFill * kRanks));
  }
  return ms;
}

// Per round, the slower rank's sample: `mine` gathered over the backend.
absl::StatusOr<std::vector<double>> SlowerRank(cohort::CollectiveBackend& backend,
                                               const std::vector<double>& mine) {
  std::vector<double> all(mine.size() * kRanks);
  if (absl::Status s = backend.Allgather(mine.data(), mine.size() * sizeof(double), all.data());
      !s.ok()) {
    return s;
  }
  std::vector<double> slower(mine.size(), 0.0);
  for (size_t i = 0; i < all.size(); ++i) {
    slower[i % mine.size()] = std::max(slower[i % mine.size()], all[i]);
  }
  return slower;
}

// Samples every side once per round, the sides in rotating order, after kUntimedRounds rounds;
// returns the slower rank's samples. Both ranks make the same calls in the same order.
absl::StatusOr<Samples> MeasureRank(uint32_t rank, const std::string& plugin_path,
                                    const std::filesystem::path& folder, PeerBarrier& barrier,
                                    int rounds) {
  FolderRendezvousStore store(folder);
  absl::StatusOr<std::unique_ptr<RankTraining>> created =
      RankTraining::Create(rank, plugin_path, (folder / "checkpoints").string(), store);
  if (!created.ok()) return created.status();
  RankTraining& training = **created;
  cohort::CollectiveBackend& backend = training.backend();
  if (rank == 0) {
    std::fprintf(stderr, "exposed_exchange_bench: buckets in launch order: %s\n",
                 training.DescribePlan().c_str());
  }
  std::vector<float> raw_buffer(training.exchanged_elements());

  Samples mine;
  using Measure = std::function<absl::StatusOr<double>()>;
  const std::pair<Measure, std::vector<double>*> sides[] = {
      {[&] { return TimeFromBarrier(barrier, [&] { return training.Step(true); }); },
       &mine.with_exchange},
      {[&] { return TimeFromBarrier(barrier, [&] { return training.Step(false); }); },
       &mine.without_exchange},
      {[&] { return TimeRawAllreduce(barrier, backend, raw_buffer); }, &mine.raw_allreduce},
  };
  for (int round = -kUntimedRounds; round < rounds; ++round) {
    for (int k = 0; k < 3; ++k) {
      const auto& [measure, taken] = sides[(round + kUntimedRounds + k) % 3];
      absl::StatusOr<double> ms = measure();
      if (!ms.ok()) return ms.status();
      if (round >= 0) taken->push_back(*ms);
    }
  }

  Samples slower;
  for (auto [side, result] : {std::pair{&mine.with_exchange, &slower.with_exchange},
                              std::pair{&mine.without_exchange, &slower.without_exchange},
                              std::pair{&mine.raw_allreduce, &slower.raw_allreduce}}) {
    absl::StatusOr<std::vector<double>> gathered = SlowerRank(backend, *side);
    if (!gathered.ok()) return gathered.status();
    *result = *std::move(gathered);
  }
  return slower;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Every sample of one side on stderr, and their median.
double ReportSide(const char* side, const std::vector<double>& samples) {
  std::string line;
  for (double ms : samples) absl::StrAppend(&line, " ", absl::StrFormat("%.2f", ms));
  const double median = Median(samples);
  std::fprintf(stderr, "exposed_exchange_bench: %s ms, slower rank per round:%s\n", side,
               line.c_str());
  std::fprintf(stderr, "exposed_exchange_bench: %s median %.3f ms over %zu rounds\n", side, median,
               samples.size());
  return median;
}

void ReportFigure(const Samples& samples) {
  std::fprintf(stderr, "exposed_exchange_bench: load averages at the end: %s\n",
               LoadAverages().c_str());
  const double with_exchange = ReportSide("with_exchange", samples.with_exchange);
  const double without_exchange = ReportSide("without_exchange", samples.without_exchange);
  const double raw = ReportSide("raw_gloo_allreduce", samples.raw_allreduce);
  const double exposed = with_exchange - without_exchange;
  std::printf(
      "{\"name\": \"exposed_exchange_per_step\", \"value\": %.3f, \"unit\": \"ms\", "
      "\"peer\": \"raw_gloo_allreduce\", \"peer_value\": %.3f, \"ratio\": %.4f}\n",
      exposed, raw, exposed / raw);
  std::fflush(stdout);
}

// A rank's whole life; its exit status. Rank 0 reports.
int RunRank(uint32_t rank, const std::string& plugin_path, const std::filesystem::path& rendezvous,
            int peer_socket, int rounds) {
  PeerBarrier barrier(peer_socket);
  absl::StatusOr<Samples> samples = MeasureRank(rank, plugin_path, rendezvous, barrier, rounds);
  if (!samples.ok()) {
    std::fprintf(stderr, "exposed_exchange_bench: rank %u: %s\n", rank,
                 samples.status().ToString().c_str());
    return 1;
  }
  if (rank == 0) ReportFigure(*samples);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 120;
  if (argc < 2 || argc > 3 || rounds < 1) {
    std::fprintf(stderr, "usage: %s MLP_PLUGIN_PATH [ROUNDS >= 1]\n", argv[0]);
    return 2;
  }
  std::error_code error;
  std::string folder =
      (std::filesystem::temp_directory_path(error) / "cohort-exposed-exchange-XXXXXX").string();
  int sockets[2];
  if (error || ::mkdtemp(folder.data()) == nullptr ||
      ::socketpair(AF_UNIX, SOCK_STREAM, 0, sockets) != 0) {
    std::fprintf(stderr, "exposed_exchange_bench: cannot create %s or a socket pair\n",
                 folder.c_str());
    return 1;
  }

  std::fprintf(stderr, "exposed_exchange_bench: load averages at the start: %s\n",
               LoadAverages().c_str());
  // No thread exists yet, so the fork is safe; the child is rank 1 and reports by exit status.
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(sockets[0]);
    std::exit(RunRank(1, argv[1], folder, sockets[1], rounds));
  }
  ::close(sockets[1]);
  int status = child < 0 ? 1 : RunRank(0, argv[1], folder, sockets[0], rounds);
  if (child < 0) std::fprintf(stderr, "exposed_exchange_bench: fork failed\n");
  ::close(sockets[0]);  // a child still waiting in a Barrier sees the end and fails
  int child_status = 0;
  if (child > 0 && (::waitpid(child, &child_status, 0) != child || !WIFEXITED(child_status) ||
                    WEXITSTATUS(child_status) != 0)) {
    std::fprintf(stderr, "exposed_exchange_bench: rank 1 failed\n");
    status = 1;
  }
  std::filesystem::remove_all(folder, error);
  return status;
}
