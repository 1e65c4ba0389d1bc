// How much of the gradient exchange a data-parallel training step still waits for once backward
// has overlapped what it can, against one raw Gloo allreduce of the same gradient bytes.
//
// Two ranks run as two processes (this program forks itself before any thread starts), joined into
// a Gloo group over loopback TCP (127.0.0.1) by CreateGlooBackend, through a RendezvousStore kept
// as files in a temporary folder. Each rank drives the real `mlp` plugin through LoadedModel,
// sized to a 7.45 MB float32 gradient (32 inputs, two hidden layers of 1343, 10 classes:
// 1,862,751 parameters), 32 records per rank per step (global batch 64), and takes the steps
// TrialRunner takes for every batch:
//
//   sampler batch -> [Begin(1/2, step)] -> train_batch (gradients_ready fires layer by layer
//   during backward) -> [Finish] -> built-in SGD step -> zero the gradients
//
// The exchange is GradientExchange over the Gloo backend with the buckets `cohort worker` gives
// an experiment that leaves optimizations at their defaults (tensor_fusion_threshold 64 MB, a
// first bucket of at most 1 MB). Three sides each take one sample per round, in rotating order,
// for ROUNDS rounds after a few untimed ones:
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
#include "runtime/arena/default_memory_provider.h"
#include "runtime/collective/collective_backend.h"
#include "runtime/collective/gloo/gloo_backend.h"
#include "runtime/collective/rendezvous_store.h"
#include "runtime/config/experiment_config.h"
#include "runtime/exchange/gradient_exchange.h"
#include "runtime/optim/optimizer.h"
#include "runtime/optim/optimizer_options.h"
#include "runtime/plugin/loaded_model.h"
#include "runtime/plugin/model_host.h"
#include "runtime/plugin/plugin_library.h"
#include "runtime/trial/record_sampler.h"

namespace {

constexpr uint32_t kRanks = 2;
constexpr uint64_t kPerRankBatch = 32;
constexpr int64_t kHiddenSize = 1343;  // 32*1343 + 1343 + 1343^2 + 1343 + 1343*10 + 10 parameters
constexpr int64_t kHiddenLayers = 2;
constexpr uint64_t kTrialSeed = 7;
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
        return absl::DeadlineExceededError(absl::StrCat("rendezvous key ", key, " not set within ",
                                                        timeout.count(), " ms"));
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

// The mlp plugin at the benchmark's size, with plain SGD.
cohort::Hyperparameters BenchHyperparameters() {
  cohort::Hyperparameters hp;
  hp.Set("optimizer", "sgd");
  hp.Set("learning_rate", 0.01);
  hp.Set("hidden_size", kHiddenSize);
  hp.Set("hidden_layers", kHiddenLayers);
  return hp;
}

// The exchange options `cohort worker` derives from an experiment's default optimizations.
cohort::ExchangeOptions DefaultExchangeOptions(const cohort::TensorArena& arena) {
  const cohort::ExperimentConfig defaults;
  const cohort::BucketLimits limits = cohort::FitBucketLimits(
      arena, uint64_t{defaults.optimizations.tensor_fusion_threshold} << 20);
  cohort::ExchangeOptions options;
  options.bucket_bytes = limits.bucket_bytes;
  options.first_bucket_bytes = limits.first_bucket_bytes;
  return options;
}

// Everything one rank holds, built in dependency order (the exchange last, once the arena exists).
class RankTraining {
 public:
  static absl::StatusOr<std::unique_ptr<RankTraining>> Create(uint32_t rank,
                                                              const std::string& plugin_path,
                                                              cohort::RendezvousStore& store) {
    std::unique_ptr<RankTraining> self(new RankTraining());
    absl::StatusOr<std::shared_ptr<const cohort::PluginLibrary>> plugin =
        cohort::PluginLibrary::Open(plugin_path);
    if (!plugin.ok()) return plugin.status();
    cohort::ModelHostOptions host;
    host.context.rank = host.context.local_rank = rank;
    host.context.size = host.context.local_size = kRanks;
    host.context.global_batch_size = kPerRankBatch * kRanks;
    host.context.per_slot_batch_size = kPerRankBatch;
    host.context.trial_seed = kTrialSeed;
    host.context.trial_id = 1;
    host.hyperparameters = BenchHyperparameters();
    host.memory = &self->memory_;
    host.log = cohort::StderrLogSink(rank);
    RankTraining* raw_self = self.get();
    host.on_gradients_ready = [raw_self](uint32_t tensor, uint64_t offset, uint64_t count) {
      if (raw_self->exchange_) raw_self->exchange_->OnGradientsReady(tensor, offset, count);
    };
    absl::StatusOr<std::unique_ptr<cohort::LoadedModel>> model =
        cohort::LoadedModel::Create(*std::move(plugin), std::move(host));
    if (!model.ok()) return model.status();
    self->model_ = *std::move(model);

    absl::StatusOr<cohort::OptimizerOptions> sgd =
        cohort::OptimizerOptionsFromHyperparameters(BenchHyperparameters());
    if (!sgd.ok()) return sgd.status();
    absl::StatusOr<std::unique_ptr<cohort::Optimizer>> optimizer =
        cohort::Optimizer::Create(*sgd, self->model_->arena());
    if (!optimizer.ok()) return optimizer.status();
    self->optimizer_ = *std::move(optimizer);

    absl::StatusOr<uint64_t> records = self->model_->DatasetSize(COHORT_SPLIT_TRAINING);
    if (!records.ok()) return records.status();
    self->sampler_ = std::make_unique<cohort::RecordSampler>(*records, kTrialSeed,
                                                             kPerRankBatch * kRanks, rank, kRanks);

    cohort::GlooOptions gloo;
    gloo.timeout = std::chrono::seconds(60);
    gloo.prefix = "exposed-exchange-bench";
    absl::StatusOr<std::unique_ptr<cohort::CollectiveBackend>> backend =
        cohort::CreateGlooBackend(rank, kRanks, store, gloo);
    if (!backend.ok()) return backend.status();
    self->backend_ = *std::move(backend);
    absl::StatusOr<std::unique_ptr<cohort::GradientExchange>> exchange =
        cohort::GradientExchange::Create(self->model_->arena(), *self->backend_,
                                         DefaultExchangeOptions(self->model_->arena()));
    if (!exchange.ok()) return exchange.status();
    self->exchange_ = *std::move(exchange);
    return self;
  }

  // One training step, exchanged or not.
  absl::Status Step(bool exchanged) {
    const cohort::BatchSpec batch = sampler_->TrainingBatch(batches_trained_);
    if (exchanged) exchange_->Begin(1.0 / kRanks, batches_trained_);
    absl::StatusOr<cohort::BatchMetrics> metrics = model_->TrainBatch(batch);
    if (exchanged) {
      // Finish even after a failed batch, so both ranks still run the same collectives.
      absl::Status summed = exchange_->Finish();
      if (metrics.ok() && !summed.ok()) return summed;
    }
    if (!metrics.ok()) return metrics.status();
    if (absl::Status s = optimizer_->Step(); !s.ok()) return s;
    if (absl::Status s = model_->arena().ZeroGradients(); !s.ok()) return s;
    ++batches_trained_;
    return absl::OkStatus();
  }

  // Elements the exchange sums per step: its buckets' ranges, alignment gaps included.
  uint64_t exchanged_elements() const {
    uint64_t elements = 0;
    for (const cohort::GradientBucket& bucket : exchange_->plan()) elements += bucket.count;
    return elements;
  }

  std::string DescribePlan() const {
    std::string text;
    for (const cohort::GradientBucket& bucket : exchange_->plan()) {
      absl::StrAppend(&text, text.empty() ? "" : ", ", bucket.tensors.size(), " tensors in ",
                      absl::StrFormat("%.3f", bucket.count * sizeof(float) / 1e6), " MB");
    }
    return text;
  }

  cohort::CollectiveBackend& backend() { return *backend_; }

 private:
  RankTraining() = default;

  cohort::DefaultMemoryProvider memory_;
  std::unique_ptr<cohort::LoadedModel> model_;
  std::unique_ptr<cohort::Optimizer> optimizer_;
  std::unique_ptr<cohort::RecordSampler> sampler_;
  std::unique_ptr<cohort::CollectiveBackend> backend_;
  std::unique_ptr<cohort::GradientExchange> exchange_;  // declared last: destroyed first
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
                                    const std::filesystem::path& rendezvous, PeerBarrier& barrier,
                                    int rounds) {
  FolderRendezvousStore store(rendezvous);
  absl::StatusOr<std::unique_ptr<RankTraining>> created =
      RankTraining::Create(rank, plugin_path, store);
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
  std::fprintf(stderr, "exposed_exchange_bench: %s median %.3f ms over %zu rounds\n", side,
               median, samples.size());
  return median;
}

void ReportFigure(const Samples& samples) {
  std::fprintf(stderr, "exposed_exchange_bench: load averages at the end: %s\n",
               LoadAverages().c_str());
  const double with_exchange = ReportSide("with_exchange", samples.with_exchange);
  const double without_exchange = ReportSide("without_exchange", samples.without_exchange);
  const double raw = ReportSide("raw_gloo_allreduce", samples.raw_allreduce);
  const double exposed = with_exchange - without_exchange;
  std::printf("{\"name\": \"exposed_exchange_per_step\", \"value\": %.3f, \"unit\": \"ms\", "
              "\"peer\": \"raw_gloo_allreduce\", \"peer_value\": %.3f, \"ratio\": %.4f}\n",
              exposed, raw, exposed / raw);
  std::fflush(stdout);
}

// A rank's whole life; its exit status. Rank 0 reports.
int RunRank(uint32_t rank, const std::string& plugin_path,
            const std::filesystem::path& rendezvous, int peer_socket, int rounds) {
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
