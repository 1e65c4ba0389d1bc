// The host service table, called as a plugin would call it: argument checks and error texts.
#include "runtime/plugin/host_api.h"

#include <cstring>
#include <string>
#include <vector>

#include "cohort/plugin.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/plugin/batch_metrics.h"
#include "runtime/plugin/error.h"
#include "runtime/plugin/model_host.h"
#include "runtime/plugin/state_stream.h"
#include "test/common/host_memory_as_device.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

class HostApiTest : public ::testing::Test {
 protected:
  HostApiTest() : api_(HostApi()), host_(Options()) {}

  ModelHostOptions Options() {
    ModelHostOptions options;
    options.context.rank = 3;
    options.context.size = 4;
    options.context.global_batch_size = 130;
    options.context.per_slot_batch_size = 32;
    options.hyperparameters.Set("layers", 3);
    options.hyperparameters.Set("lr", 0.25);
    options.hyperparameters.Set("nesterov", true);
    options.hyperparameters.Set("optimizer", "adam");
    options.hyperparameters.Set("sizes", Hyperparameters::Other{"[1, 2]"});
    options.memory = &memory_;
    options.log = [this](cohort_log_level level, absl::string_view message) {
      logged_ += std::string(LogLevelName(level)) + ":" + std::string(message) + ";";
    };
    return options;
  }

  static std::string Message(cohort_error* error) {
    absl::Status s = TakeError(error);
    return std::string(s.message());
  }

  cohort_tensor_spec Spec(const char* name, uint64_t count,
                          cohort_dtype dtype = COHORT_DTYPE_FLOAT32) {
    cohort_tensor_spec s{};
    s.struct_size = COHORT_STRUCT_SIZE(cohort_tensor_spec, element_count);
    s.name = name;
    s.name_len = std::strlen(name);
    s.dtype = dtype;
    s.device = {COHORT_DEVICE_CPU, 0};
    s.element_count = count;
    return s;
  }
  static cohort_tensor_view View() {
    cohort_tensor_view v{};
    v.struct_size = COHORT_STRUCT_SIZE(cohort_tensor_view, arena_offset);
    return v;
  }

  CpuOnlyMemoryProvider memory_;
  std::string logged_;
  const cohort_host_api* api_;
  ModelHost host_;
};

TEST_F(HostApiTest, TableDeclaresItsVersionAndSize) {
  EXPECT_EQ(api_->abi_version.major, static_cast<uint32_t>(COHORT_ABI_VERSION_MAJOR));
  EXPECT_EQ(api_->abi_version.minor, static_cast<uint32_t>(COHORT_ABI_VERSION_MINOR));
  EXPECT_EQ(api_->struct_size, COHORT_STRUCT_SIZE(cohort_host_api, hparam_text));
}

TEST_F(HostApiTest, ErrorsCarryCodeAndMessage) {
  cohort_error* e = api_->error_create(COHORT_STATUS_NOT_FOUND, "no such file xyz", 12);
  EXPECT_EQ(api_->error_code(e), COHORT_STATUS_NOT_FOUND);
  const char* text = nullptr;
  size_t len = 0;
  api_->error_message(e, &text, &len);
  EXPECT_EQ(std::string(text, len), "no such file");
  api_->error_destroy(e);

  // A plugin cannot create an "error" that means success.
  absl::Status odd = TakeError(api_->error_create(0, "", 0));
  EXPECT_EQ(odd.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(odd.message(), "(the plugin gave no message)");
}

TEST_F(HostApiTest, TrialContextAndLog) {
  const cohort_trial_context* context = api_->trial_context(&host_);
  EXPECT_EQ(context->struct_size, COHORT_STRUCT_SIZE(cohort_trial_context, stream));
  EXPECT_EQ(context->rank, 3u);
  EXPECT_EQ(context->per_slot_batch_size, 32u);
  api_->log(&host_, COHORT_LOG_WARNING, "careful", 7);
  EXPECT_EQ(logged_, "warning:careful;");
}

// Each line of a message of several is a line of its level, so a warning's every line is told as
// a warning (the console showed its first line alone); a NUL no longer cuts a line short.
TEST(StderrLogSinkTest, EveryLineOfAMessageCarriesItsLevel) {
  const LogSink sink = StderrLogSink();
  ::testing::internal::CaptureStderr();
  sink(COHORT_LOG_WARNING, "multi\nline\nwarning\n");
  sink(COHORT_LOG_ERROR, absl::string_view("a\0b", 3));
  sink(COHORT_LOG_INFO, "");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "warning: multi\nwarning: line\nwarning: warning\nerror: a\\0b\ninfo: \n");
}

TEST_F(HostApiTest, TypedHyperparameters) {
  int64_t i = 0;
  double d = 0;
  uint8_t b = 0;
  const char* s = nullptr;
  size_t n = 0;
  EXPECT_EQ(api_->hparam_int(&host_, "layers", 6, &i), nullptr);
  EXPECT_EQ(i, 3);
  EXPECT_EQ(api_->hparam_double(&host_, "lr", 2, &d), nullptr);
  EXPECT_EQ(d, 0.25);
  EXPECT_EQ(api_->hparam_double(&host_, "layers", 6, &d), nullptr);  // an int reads as a double
  EXPECT_EQ(d, 3.0);
  EXPECT_EQ(api_->hparam_bool(&host_, "nesterov", 8, &b), nullptr);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(api_->hparam_string(&host_, "optimizer", 9, &s, &n), nullptr);
  EXPECT_EQ(std::string(s, n), "adam");

  EXPECT_EQ(api_->hparam_type(&host_, "lr", 2), COHORT_HPARAM_DOUBLE);
  EXPECT_EQ(api_->hparam_type(&host_, "sizes", 5), COHORT_HPARAM_OTHER);
  EXPECT_EQ(api_->hparam_type(&host_, "momentum", 8), COHORT_HPARAM_ABSENT);
}

// hparam_text (1.5) reads any value as YAML text, a list above all, which the typed getters
// cannot; the text stays where it was for the model's lifetime.
TEST_F(HostApiTest, AnyHyperparameterReadsAsYamlText) {
  ASSERT_TRUE(COHORT_HAS_FIELD(api_, cohort_host_api, hparam_text));
  const auto text = [&](const std::string& name) {
    const char* s = nullptr;
    size_t n = 0;
    cohort_error* error = api_->hparam_text(&host_, name.data(), name.size(), &s, &n);
    if (error != nullptr) return "error: " + Message(error);
    return std::string(s, n);
  };
  EXPECT_EQ(text("sizes"), "[1, 2]");
  EXPECT_EQ(text("layers"), "3");
  EXPECT_EQ(text("lr"), "0.25");
  EXPECT_EQ(text("nesterov"), "true");
  EXPECT_EQ(text("optimizer"), "adam");
  EXPECT_EQ(text("momentum"),
            "error: hyperparameter 'momentum' is not set; the trial has: layers, lr, nesterov, "
            "optimizer, sizes");
  const char* first = nullptr;
  const char* again = nullptr;
  size_t n = 0;
  ASSERT_EQ(api_->hparam_text(&host_, "sizes", 5, &first, &n), nullptr);
  ASSERT_EQ(api_->hparam_text(&host_, "sizes", 5, &again, &n), nullptr);
  EXPECT_EQ(first, again);
}

// The C++ layer's `_or` getters take a null (`~`, `--set name=`) for the default, as the config
// does; any other list or map is still a wrong type.
TEST_F(HostApiTest, TheCppLayersOrGettersTakeANullForTheDefault) {
  ModelHostOptions options = Options();
  options.hyperparameters.Set("dump", Hyperparameters::Other{"~"});
  ModelHost host(std::move(options));
  const cohort::Host cpp(HostApi(), &host);
  EXPECT_EQ(cpp.hparam_string_or("dump", "none"), "none");
  EXPECT_EQ(cpp.hparam_double_or("dump", 0.5), 0.5);
  EXPECT_EQ(cpp.hparam_string_or("missing", "none"), "none");
  EXPECT_EQ(cpp.hparam_double_or("lr", 0.5), 0.25);
  EXPECT_THROW(cpp.hparam_string_or("sizes", "none"), cohort::Error);
  EXPECT_THROW(cpp.hparam_string("dump"), cohort::Error) << "only the _or getters default";
}

TEST_F(HostApiTest, HyperparameterErrorsNameTheKeyAndTheType) {
  int64_t i = 0;
  cohort_error* missing = api_->hparam_int(&host_, "momentum", 8, &i);
  EXPECT_EQ(api_->error_code(missing), COHORT_STATUS_NOT_FOUND);
  EXPECT_EQ(Message(missing),
            "hyperparameter 'momentum' is not set; the trial has: layers, lr, nesterov, optimizer, "
            "sizes");
  EXPECT_EQ(Message(api_->hparam_int(&host_, "lr", 2, &i)),
            "hyperparameter 'lr' is a double (0.25), not an int");
  uint8_t b = 0;
  EXPECT_EQ(Message(api_->hparam_bool(&host_, "optimizer", 9, &b)),
            "hyperparameter 'optimizer' is a string (\"adam\"), not a bool");
  const char* s = nullptr;
  size_t n = 0;
  EXPECT_EQ(Message(api_->hparam_string(&host_, "sizes", 5, &s, &n)),
            "hyperparameter 'sizes' is a list or map ([1, 2]), not a string");
}

TEST_F(HostApiTest, RegisterTensorsLaysOutOneArenaPerDtype) {
  const cohort_tensor_spec specs[] = {Spec("w", 5), Spec("b", 1),
                                      Spec("h", 3, COHORT_DTYPE_FLOAT64)};
  cohort_tensor_view views[] = {View(), View(), View()};
  ASSERT_EQ(api_->register_tensors(&host_, specs, views, 3), nullptr);
  EXPECT_EQ(views[0].arena_offset, 0u);
  EXPECT_EQ(views[1].arena_offset, 16u);  // next 64-byte boundary in float32 elements
  EXPECT_EQ(views[2].arena_offset, 0u);   // first of the float64 block
  EXPECT_EQ(static_cast<float*>(views[1].data), static_cast<float*>(views[0].data) + 16);
  EXPECT_EQ(host_.arena->blocks().size(), 2u);

  EXPECT_THAT(Message(api_->register_tensors(&host_, specs, views, 3)),
              HasSubstr("already called"));
}

TEST_F(HostApiTest, RegisterTensorsRefusesBadSpecs) {
  cohort_tensor_view views[] = {View(), View()};
  const cohort_tensor_spec duplicate[] = {Spec("w", 5), Spec("w", 1)};
  EXPECT_EQ(Message(api_->register_tensors(&host_, duplicate, views, 2)),
            "register_tensors: tensor 1 'w': the name is registered twice");
  const cohort_tensor_spec empty[] = {Spec("w", 0)};
  EXPECT_EQ(Message(api_->register_tensors(&host_, empty, views, 1)),
            "register_tensors: tensor 0 'w': element_count must be > 0");
  const cohort_tensor_spec dtype[] = {Spec("w", 2, 42)};
  EXPECT_THAT(Message(api_->register_tensors(&host_, dtype, views, 1)),
              HasSubstr("unknown dtype 42"));
  cohort_tensor_spec gpu = Spec("w", 2);
  gpu.device = {COHORT_DEVICE_CUDA, 1};
  EXPECT_THAT(
      Message(api_->register_tensors(&host_, &gpu, views, 1)),
      HasSubstr(
          "tensor 'w' on cuda:1: CUDA device 1 requested, but this host serves CPU memory only"));
  cohort_tensor_spec old = Spec("w", 2);
  old.struct_size = 0;
  EXPECT_THAT(Message(api_->register_tensors(&host_, &old, views, 1)),
              HasSubstr("specs[0].struct_size is 0"));
  EXPECT_EQ(host_.arena, nullptr);  // nothing half-registered

  host_.phase = ModelPhase::kTraining;
  const cohort_tensor_spec fine[] = {Spec("w", 2)};
  EXPECT_THAT(Message(api_->register_tensors(&host_, fine, views, 1)),
              HasSubstr("only be called from model_create"));
}

TEST_F(HostApiTest, RegisterTensorsReadsAShapeOnlyFromSpecsLargeEnoughToHoldIt) {
  const uint64_t matrix[] = {2, 3};
  const uint64_t wrong[] = {7, 7};
  cohort_tensor_spec specs[] = {Spec("w", 6), Spec("old", 4), Spec("unknown", 5), Spec("short", 3)};
  specs[0].struct_size = COHORT_STRUCT_SIZE(cohort_tensor_spec, shape_len);
  specs[0].shape = matrix;
  specs[0].shape_len = 2;
  specs[1].shape = wrong;  // beyond its 1.0 struct_size: never read
  specs[1].shape_len = 2;
  specs[2].struct_size = COHORT_STRUCT_SIZE(cohort_tensor_spec, shape_len);  // 1.1, no shape
  specs[3].struct_size = COHORT_STRUCT_SIZE(cohort_tensor_spec, shape);  // shape_len not covered
  specs[3].shape = wrong;
  specs[3].shape_len = 2;
  cohort_tensor_view views[] = {View(), View(), View(), View()};
  ASSERT_EQ(api_->register_tensors(&host_, specs, views, 4), nullptr);
  EXPECT_THAT(host_.arena->spec(0).shape, ::testing::ElementsAre(2u, 3u));
  EXPECT_THAT(host_.arena->spec(1).shape, ::testing::IsEmpty());
  EXPECT_THAT(host_.arena->spec(2).shape, ::testing::IsEmpty());
  EXPECT_THAT(host_.arena->spec(3).shape, ::testing::IsEmpty());
  EXPECT_EQ(views[0].element_count, 6u);
}

TEST_F(HostApiTest, RegisterTensorsRefusesBadShapes) {
  cohort_tensor_view views[] = {View(), View()};
  const uint64_t matrix[] = {2, 3};
  cohort_tensor_spec specs[] = {Spec("b", 3), Spec("w", 5)};
  specs[1].struct_size = COHORT_STRUCT_SIZE(cohort_tensor_spec, shape_len);
  specs[1].shape = matrix;
  specs[1].shape_len = 2;
  cohort_error* mismatch = api_->register_tensors(&host_, specs, views, 2);
  EXPECT_EQ(api_->error_code(mismatch), COHORT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      Message(mismatch),
      "register_tensors: tensor 1 'w': shape [2, 3] holds 6 elements, but element_count is 5");

  specs[1].shape = nullptr;
  cohort_error* null_shape = api_->register_tensors(&host_, specs, views, 2);
  EXPECT_EQ(api_->error_code(null_shape), COHORT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Message(null_shape), "register_tensors: specs[1] 'w' has shape_len 2 but a NULL shape");
  EXPECT_EQ(host_.arena, nullptr);  // nothing half-registered
}

TEST_F(HostApiTest, GradientsReadyChecksPhaseAndRange) {
  const cohort_tensor_spec specs[] = {Spec("w", 10)};
  cohort_tensor_view views[] = {View()};
  ASSERT_EQ(api_->register_tensors(&host_, specs, views, 1), nullptr);
  EXPECT_THAT(Message(api_->gradients_ready(&host_, 0, 0, 10)),
              HasSubstr("only be called during train_batch"));
  // Every refusal is kept for the batch (the first one), whatever the plugin does with it.
  EXPECT_THAT(host_.TakeReadyBreach().message(), HasSubstr("only be called during train_batch"));
  EXPECT_TRUE(host_.TakeReadyBreach().ok());
  host_.phase = ModelPhase::kTraining;
  host_.BeginTrainingBatch();
  EXPECT_EQ(api_->gradients_ready(&host_, 0, 4, 6), nullptr);
  EXPECT_TRUE(host_.TakeReadyBreach().ok());
  EXPECT_EQ(Message(api_->gradients_ready(&host_, 0, 4, 7)),
            "gradients_ready: tensor 'w', range [4, 4+7) is past the tensor's end (10 elements)");
  EXPECT_EQ(Message(api_->gradients_ready(&host_, 1, 0, 1)),
            "gradients_ready: tensor index 1 but the model registered 1 tensors");
  EXPECT_EQ(Message(api_->gradients_ready(&host_, 0, 0, 0)),
            "gradients_ready: tensor 'w', range [0, 0+0) is empty");
  EXPECT_THAT(Message(api_->gradients_ready(&host_, 0, 8, 1)),
              HasSubstr("range [8, 8+1) overlaps range [4, 10) reported ready before"));
  EXPECT_THAT(host_.TakeReadyBreach().message(), HasSubstr("[4, 4+7) is past the tensor's end"));
  // A new batch starts with no range: the same report is taken again.
  host_.BeginTrainingBatch();
  EXPECT_EQ(api_->gradients_ready(&host_, 0, 4, 6), nullptr);
  EXPECT_EQ(api_->gradients_ready(&host_, 0, 0, 4), nullptr);
}

TEST_F(HostApiTest, StateTensorsLiveInAnArenaOfTheirOwnWithoutGradients) {
  cohort_tensor_spec specs[] = {Spec("w", 5), Spec("mean", 3), Spec("count", 1, COHORT_DTYPE_INT64),
                                Spec("b", 2)};
  for (cohort_tensor_spec& spec : specs)
    spec.struct_size = COHORT_STRUCT_SIZE(cohort_tensor_spec, kind);
  specs[1].kind = COHORT_TENSOR_STATE;
  specs[2].kind = COHORT_TENSOR_STATE;
  cohort_tensor_view views[] = {View(), View(), View(), View()};
  ASSERT_EQ(api_->register_tensors(&host_, specs, views, 4), nullptr);
  ASSERT_EQ(host_.arena->tensor_count(), 2u);  // w, b
  EXPECT_EQ(host_.arena->spec(1).name, "b");
  ASSERT_NE(host_.state, nullptr);
  ASSERT_EQ(host_.state->tensor_count(), 2u);   // mean, count
  EXPECT_EQ(host_.state->blocks().size(), 2u);  // float32 and int64
  EXPECT_EQ(views[1].data, host_.state->data(0));
  EXPECT_EQ(views[1].grad, nullptr);
  EXPECT_EQ(views[2].grad, nullptr);
  EXPECT_EQ(views[3].data, host_.arena->data(1));
  EXPECT_NE(views[3].grad, nullptr);

  // The plugin's indices map onto the parameter arena's; a state tensor has no gradient to report.
  std::vector<uint32_t> reported;
  host_.options.on_gradients_ready = [&](uint32_t tensor, uint64_t, uint64_t) {
    reported.push_back(tensor);
  };
  host_.phase = ModelPhase::kTraining;
  EXPECT_EQ(api_->gradients_ready(&host_, 3, 0, 2), nullptr);
  EXPECT_EQ(api_->gradients_ready(&host_, 0, 0, 5), nullptr);
  EXPECT_THAT(reported, ::testing::ElementsAre(1u, 0u));
  cohort_error* state = api_->gradients_ready(&host_, 1, 0, 3);
  EXPECT_EQ(api_->error_code(state), COHORT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Message(state),
            "gradients_ready: tensor 'mean' is state (COHORT_TENSOR_STATE) and has no gradient");
}

TEST_F(HostApiTest, StateTensorsAreCheckedByName) {
  cohort_tensor_view views[] = {View(), View()};
  cohort_tensor_spec specs[] = {Spec("w", 5), Spec("n", 1, COHORT_DTYPE_INT64)};
  for (cohort_tensor_spec& spec : specs)
    spec.struct_size = COHORT_STRUCT_SIZE(cohort_tensor_spec, kind);
  EXPECT_EQ(Message(api_->register_tensors(&host_, specs, views, 2)),
            "register_tensors: tensor 1 'n': an int64 tensor has no gradient; register it as state "
            "(COHORT_TENSOR_STATE)");
  specs[1].kind = 7;
  EXPECT_EQ(Message(api_->register_tensors(&host_, specs, views, 2)),
            "register_tensors: specs[1] 'n' has kind 7; allowed: 0 (COHORT_TENSOR_PARAMETER), 1 "
            "(COHORT_TENSOR_STATE)");
  specs[0].kind = specs[1].kind = COHORT_TENSOR_STATE;
  EXPECT_THAT(Message(api_->register_tensors(&host_, specs, views, 2)),
              HasSubstr("every tensor is state"));
  specs[0] = Spec("n", 2);
  specs[0].struct_size = COHORT_STRUCT_SIZE(cohort_tensor_spec, kind);
  EXPECT_EQ(Message(api_->register_tensors(&host_, specs, views, 2)),
            "register_tensors: 'n' is registered twice (as a parameter and as state)");
  EXPECT_EQ(host_.arena, nullptr);  // nothing half-registered
  EXPECT_EQ(host_.state, nullptr);
}

// A plugin built against older headers lays its spec array out with that release's struct size;
// the host steps through it by that size, not by its own.
TEST_F(HostApiTest, SpecArraysOfOlderPluginsAreReadAtTheirOwnStride) {
  struct Release {
    uint32_t minor;
    size_t stride;
  };
  for (const Release release : {Release{0, 48}, Release{1, 64}, Release{3, 64}}) {
    ModelHost host(Options());
    host.plugin_minor = release.minor;
    std::vector<uint64_t> storage(3 * release.stride / 8);
    const char* names[] = {"a", "b", "c"};
    for (size_t i = 0; i < 3; ++i) {
      cohort_tensor_spec spec = Spec(names[i], i + 1);
      spec.struct_size = release.stride;
      std::memcpy(reinterpret_cast<char*>(storage.data()) + i * release.stride, &spec,
                  release.stride);
    }
    cohort_tensor_view views[] = {View(), View(), View()};
    ASSERT_EQ(api_->register_tensors(
                  &host, reinterpret_cast<const cohort_tensor_spec*>(storage.data()), views, 3),
              nullptr)
        << "ABI 1." << release.minor;
    ASSERT_EQ(host.arena->tensor_count(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(host.arena->spec(i).name, names[i]) << "ABI 1." << release.minor;
      EXPECT_EQ(views[i].element_count, i + 1);
    }
  }
}

TEST_F(HostApiTest, MetricsRefuseRepeatsUnknownReductionsAndNamesNotUtf8) {
  cohort_metrics sink;
  EXPECT_EQ(api_->metric_add(&sink, "loss", 4, 0.5, 8, COHORT_REDUCE_MEAN), nullptr);
  EXPECT_EQ(Message(api_->metric_add(&sink, "loss", 4, 0.5, 8, COHORT_REDUCE_MEAN)),
            "metric 'loss' was added twice in one batch");
  EXPECT_THAT(Message(api_->metric_add(&sink, "acc", 3, 0.5, 8, 9)),
              HasSubstr("unknown reduction 9"));
  EXPECT_EQ(Message(api_->metric_add(&sink, "", 0, 0.5, 8, COHORT_REDUCE_SUM)),
            "metric_add: empty metric name");
  EXPECT_EQ(Message(api_->metric_add(&sink, "acc\xff", 4, 0.5, 8, COHORT_REDUCE_SUM)),
            "metric 'acc\\xff': the name is not UTF-8 text");
  ASSERT_EQ(sink.batch.metrics.size(), 1u);
  EXPECT_EQ(sink.batch.metrics[0].record_count, 8u);
}

TEST_F(HostApiTest, DeviceMetricsAreCheckedAndNeverCapturedWhenRefused) {
  testing::HostValueReader reader;
  host_.options.device_values = &reader;
  cohort_metrics sink;
  sink.host = &host_;
  const double loss = 0.25;
  const float accuracy = 0.5f;
  EXPECT_EQ(
      api_->metric_add_device(&sink, "loss", 4, &loss, COHORT_DTYPE_FLOAT64, 8, COHORT_REDUCE_MEAN),
      nullptr);
  EXPECT_EQ(api_->metric_add_device(&sink, "accuracy", 8, &accuracy, COHORT_DTYPE_FLOAT32, 8,
                                    COHORT_REDUCE_MEAN),
            nullptr);
  EXPECT_EQ(Message(api_->metric_add_device(&sink, "loss", 4, &loss, COHORT_DTYPE_FLOAT64, 8,
                                            COHORT_REDUCE_MEAN)),
            "metric 'loss' was added twice in one batch");
  EXPECT_EQ(Message(api_->metric_add_device(&sink, "bits", 4, &loss, COHORT_DTYPE_FLOAT16, 8,
                                            COHORT_REDUCE_MEAN)),
            "metric_add_device 'bits': dtype 2 is not one of 1 (float32), 4 (float64)");
  EXPECT_EQ(Message(api_->metric_add_device(&sink, "none", 4, nullptr, COHORT_DTYPE_FLOAT64, 8,
                                            COHORT_REDUCE_MEAN)),
            "metric_add_device 'none': NULL value pointer");
  EXPECT_EQ(reader.captures, 2);  // the refused ones took nothing
  ASSERT_EQ(sink.batch.metrics.size(), 2u);
  EXPECT_EQ(sink.batch.metrics[1].device_ticket, 1u);
  EXPECT_TRUE(sink.batch.unsettled());

  host_.options.device_values = nullptr;  // read at once through the memory
  cohort_metrics direct;
  direct.host = &host_;
  EXPECT_EQ(api_->metric_add_device(&direct, "accuracy", 8, &accuracy, COHORT_DTYPE_FLOAT32, 3,
                                    COHORT_REDUCE_MAX),
            nullptr);
  EXPECT_FALSE(direct.batch.unsettled());
  EXPECT_EQ(direct.batch.metrics[0].value, 0.5);
  EXPECT_EQ(direct.batch.metrics[0].reduction, COHORT_REDUCE_MAX);
}

TEST_F(HostApiTest, WriterAndReader) {
  cohort_writer writer;
  const uint32_t value = 0xC0FFEE;
  ASSERT_EQ(api_->writer_write(&writer, &value, sizeof value), nullptr);
  ASSERT_EQ(api_->writer_write(&writer, "ab", 2), nullptr);
  cohort_reader reader{writer.bytes, 0};
  EXPECT_EQ(api_->reader_remaining(&reader), 6u);
  uint32_t back = 0;
  ASSERT_EQ(api_->reader_read(&reader, &back, sizeof back), nullptr);
  EXPECT_EQ(back, value);
  char tail[4];
  EXPECT_EQ(Message(api_->reader_read(&reader, tail, 4)),
            "reader_read: asked for 4 bytes but only 2 are left of 6");
  EXPECT_EQ(api_->reader_remaining(&reader), 2u);
}

}  // namespace
}  // namespace cohort
