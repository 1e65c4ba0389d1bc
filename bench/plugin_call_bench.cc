// What the host adds to a plugin call, measured against the peer: calling the plugin's
// train_batch function pointer directly with a bare metrics sink. Cohort's path
// (LoadedModel::TrainBatch) adds the phase guard, error translation, the metrics copy and the
// "loss" check. Also times TensorArena::ZeroGradients against a plain memset of the same bytes.
// Prints one JSON line per pair: {"name", "value" (cohort), "unit", "peer", "peer_value",
// "ratio" (value / peer_value)}; the ratios, not the absolute times, are the figures to watch.
//
//   plugin_call_bench PLUGIN_DIR [ITERATIONS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/arena/device_memory.h"
#include "runtime/plugin/batch_metrics.h"
#include "runtime/plugin/host_api.h"
#include "runtime/plugin/loaded_model.h"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double NanosecondsPerCall(long iterations, F&& call) {
  for (long i = 0; i < iterations / 10; ++i) call();  // warm up
  const auto start = Clock::now();
  for (long i = 0; i < iterations; ++i) call();
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
         static_cast<double>(iterations);
}

void Report(const char* name, double cohort, const char* peer_name, double peer) {
  std::printf(
      "{\"name\": \"%s\", \"value\": %.1f, \"unit\": \"ns\", \"peer\": \"%s\", "
      "\"peer_value\": %.1f, \"ratio\": %.4f}\n",
      name, cohort, peer_name, peer, cohort / peer);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PLUGIN_DIR [ITERATIONS]\n", argv[0]);
    return 2;
  }
  const long iterations = argc > 2 ? std::atol(argv[2]) : 200000;
  auto plugin = cohort::PluginLibrary::Open(std::string(argv[1]) + "/test/c_quadratic.so");
  if (!plugin.ok()) {
    std::fprintf(stderr, "%s\n", std::string(plugin.status().message()).c_str());
    return 1;
  }
  cohort::CpuOnlyMemoryProvider memory;
  cohort::ModelHostOptions options;
  options.memory = &memory;
  auto model = cohort::LoadedModel::Create(*plugin, std::move(options));
  if (!model.ok()) return 1;

  cohort::BatchSpec batch;
  batch.record_indices = {1, 2, 3, 4, 5, 6, 7, 8};
  // The peer: a second model created straight through the plugin table, called with no host
  // wrapper around it.
  cohort::ModelHostOptions raw_options;
  raw_options.memory = &memory;
  cohort_host raw_host(std::move(raw_options));
  const cohort_model_create_args args{COHORT_STRUCT_SIZE(cohort_model_create_args, host),
                                      cohort::HostApi(), &raw_host};
  cohort_model* raw_model = nullptr;
  if ((*plugin)->api().model_create(&args, &raw_model) != nullptr) return 1;
  raw_host.phase = cohort::ModelPhase::kTraining;
  const cohort_batch raw_batch{COHORT_STRUCT_SIZE(cohort_batch, record_count),
                               COHORT_SPLIT_TRAINING,
                               0,
                               0,
                               batch.record_indices.data(),
                               batch.record_indices.size()};

  const double peer_call = NanosecondsPerCall(iterations, [&] {
    cohort_metrics sink;
    (void)(*plugin)->api().train_batch(raw_model, &raw_batch, &sink);
  });
  const double cohort_call =
      NanosecondsPerCall(iterations, [&] { (void)(*model)->TrainBatch(batch); });
  Report("plugin_train_batch_8_records", cohort_call, "direct_train_batch_call", peer_call);
  (*plugin)->api().model_destroy(raw_model);

  // Zeroing a 4 MiB gradient arena.
  auto arena = cohort::TensorArena::Create(
      {{"g", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, 1 << 20}}, memory);
  if (!arena.ok()) return 1;
  void* grad = (*arena)->grad(0);
  const long zero_iterations = iterations / 100 + 1;
  const double peer_zero =
      NanosecondsPerCall(zero_iterations, [&] { std::memset(grad, 0, 4u << 20); });
  const double cohort_zero =
      NanosecondsPerCall(zero_iterations, [&] { (void)(*arena)->ZeroGradients(); });
  Report("zero_gradients_4mib", cohort_zero, "memset_4mib", peer_zero);
  return 0;
}
