// Malformed configs: each error is INVALID_ARGUMENT and names the field path, the value found
// and what is allowed.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/config/experiment_config.h"

namespace cohort {
namespace {

constexpr char kValidConfig[] = R"(
name: base
entrypoint: mlp
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 100
hyperparameters:
  global_batch_size: 32
)";

struct MalformedCase {
  const char* label;
  std::string yaml;               // empty: kValidConfig
  std::vector<std::string> sets;  // overrides applied to the yaml
  std::string message;            // the error message contains this
};

std::vector<MalformedCase> Cases() {
  const std::string valid = kValidConfig;
  return {
      {"length with an unknown unit",
       "",
       {"searcher.max_length={minutes: 3}"},
       "searcher.max_length: expected exactly one of batches, records, epochs; got {minutes: 3}"},
      {"length with two units",
       "",
       {"searcher.max_length={batches: 1, epochs: 2}"},
       "searcher.max_length: expected exactly one of batches, records, epochs; got {batches: 1, "
       "epochs: 2}"},
      {"length of zero batches",
       "",
       {"searcher.max_length.batches=0"},
       "searcher.max_length.batches: expected an integer >= 1; got 0"},
      {"length as text",
       "",
       {"searcher.max_length=forever"},
       "searcher.max_length: expected exactly one of batches, records, epochs; got 'forever'"},
      {"validation period with a bad unit",
       "",
       {"min_validation_period={weeks: 1}"},
       "min_validation_period: expected exactly one of batches, records, epochs; got {weeks: 1}"},
      {"checkpoint period fractional",
       "",
       {"min_checkpoint_period.epochs=0.5"},
       "min_checkpoint_period.epochs: expected an integer >= 0; got 0.5"},
      {"negative slots",
       "",
       {"resources.slots_per_trial=-2"},
       "resources.slots_per_trial: expected an integer >= 1; got -2"},
      {"slots beyond 32 bits",
       "",
       {"resources.slots_per_trial=5000000000"},
       "resources.slots_per_trial: expected an integer between 1 and 4294967295; got 5000000000"},
      {"quoted slots",
       "",
       {"resources.slots_per_trial='2'"},
       "resources.slots_per_trial: expected an integer >= 1; got '2'"},
      {"resources as a list", "", {"resources=[1]"}, "resources: expected a map of keys; got [1]"},
      {"aggregation frequency as a word",
       "",
       {"optimizations.aggregation_frequency=often"},
       "optimizations.aggregation_frequency: expected an integer >= 1; got 'often'"},
      {"tensor fusion threshold zero",
       "",
       {"optimizations.tensor_fusion_threshold=0"},
       "optimizations.tensor_fusion_threshold: expected an integer >= 1; got 0"},
      {"mixed precision level",
       "",
       {"optimizations.mixed_precision=O4"},
       "optimizations.mixed_precision: expected one of O0, O1, O2, O3; got 'O4'"},
      {"collective timeout zero",
       "",
       {"optimizations.collective_timeout=0"},
       "optimizations.collective_timeout: expected an integer >= 1; got 0"},
      {"learning rate scaling rule",
       "",
       {"optimizations.learning_rate_scaling=cubic"},
       "optimizations.learning_rate_scaling: expected one of none, linear, sqrt; got 'cubic'"},
      {"ZeRO stage 3",
       "",
       {"optimizations.zero_stage=3"},
       "optimizations.zero_stage: expected an integer between 0 and 2; got 3"},
      {"ZeRO stage 2 beside compression",
       "",
       {"optimizations.zero_stage=2", "optimizations.gradient_compression=fp16"},
       "optimizations.zero_stage: 2 reduces each shard's float32 gradient onto its owner, which "
       "optimizations.gradient_compression fp16 cannot shard; use zero_stage 1 (which keeps the "
       "compressed exchange) or no compression"},
      {"negative straggler threshold",
       "",
       {"optimizations.straggler_threshold=-0.5"},
       "optimizations.straggler_threshold: expected a fraction from 0 (no warning) to 100; got "
       "-0.5"},
      {"non-finite gradient policy",
       "",
       {"optimizations.nonfinite_gradients=retry"},
       "optimizations.nonfinite_gradients: expected one of ignore, skip, fail; got 'retry'"},
      {"boolean as a word",
       "",
       {"optimizations.average_aggregated_gradients=maybe"},
       "optimizations.average_aggregated_gradients: expected true or false; got 'maybe'"},
      {"boolean as a number",
       "",
       {"perform_initial_validation=3"},
       "perform_initial_validation: expected true or false; got 3"},
      {"searcher Determined has",
       "",
       {"searcher.name=pbt"},
       "searcher.name: expected one of single, grid, random, adaptive_asha (Determined's pbt "
       "searcher is not supported); got 'pbt'"},
      {"searcher nobody has",
       "",
       {"searcher.name=singel"},
       "searcher.name: expected one of single, grid, random, adaptive_asha; got 'singel'"},
      {"searcher without a name",
       "",
       {"searcher.name="},
       "searcher.name: expected a searcher name (single, grid, random, adaptive_asha); got null"},
      {"random without max_trials",
       "",
       {"searcher.name=random"},
       "searcher.max_trials: expected an integer >= 1 (the number of trials); got nothing"},
      {"adaptive_asha without max_trials",
       "",
       {"searcher.name=adaptive_asha"},
       "searcher.max_trials: expected an integer >= 1 (the number of trials); got nothing"},
      {"zero trials",
       "",
       {"searcher.name=random", "searcher.max_trials=0"},
       "searcher.max_trials: expected an integer >= 1; got 0"},
      {"negative concurrency",
       "",
       {"searcher.name=grid", "searcher.max_concurrent_trials=-1"},
       "searcher.max_concurrent_trials: expected an integer >= 0; got -1"},
      {"divisor of one",
       "",
       {"searcher.name=adaptive_asha", "searcher.max_trials=8", "searcher.divisor=1"},
       "searcher.divisor: expected a number > 1; got 1"},
      {"divisor as a word",
       "",
       {"searcher.name=adaptive_asha", "searcher.max_trials=8", "searcher.divisor=half"},
       "searcher.divisor: expected a number; got 'half'"},
      {"zero rungs",
       "",
       {"searcher.name=adaptive_asha", "searcher.max_trials=8", "searcher.max_rungs=0"},
       "searcher.max_rungs: expected an integer between 1 and 64; got 0"},
      {"too many rungs",
       "",
       {"searcher.name=adaptive_asha", "searcher.max_trials=8", "searcher.max_rungs=65"},
       "searcher.max_rungs: expected an integer between 1 and 64; got 65"},
      {"mode unknown",
       "",
       {"searcher.name=adaptive_asha", "searcher.max_trials=8", "searcher.mode=fast"},
       "searcher.mode: expected one of aggressive, standard, conservative; got 'fast'"},
      {"bracket with no rungs",
       "",
       {"searcher.name=adaptive_asha", "searcher.max_trials=8", "searcher.bracket_rungs=[0, 2]"},
       "searcher.bracket_rungs: expected a list of rung counts, each an integer between 1 and 64; "
       "got [0, 2]"},
      {"bracket rungs not a list",
       "",
       {"searcher.name=adaptive_asha", "searcher.max_trials=8", "searcher.bracket_rungs=3"},
       "searcher.bracket_rungs: expected a list of rung counts, each an integer between 1 and 64; "
       "got 3"},
      {"asha key misspelt",
       "",
       {"searcher.name=adaptive_asha", "searcher.max_trials=8", "searcher.max_rung=3"},
       "searcher.max_rung: unknown key; did you mean 'max_rungs'?"},
      {"grid range without count",
       "",
       {"searcher.name=grid", "hyperparameters.lr={type: log, minval: -4, maxval: -1}"},
       "hyperparameters.lr.count: expected an integer >= 1 (the grid searcher's number of points "
       "for this range); got nothing"},
      {"grid nested range without count",
       "",
       {"searcher.name=grid",
        "hyperparameters.optimizer={momentum: {type: double, minval: 0.8, maxval: 0.99}}"},
       "hyperparameters.optimizer.momentum.count: expected an integer >= 1"},
      {"count of zero",
       "",
       {"hyperparameters.n={type: int, minval: 1, maxval: 4, count: 0}"},
       "hyperparameters.n.count: expected an integer >= 1; got 0"},
      {"count on a categorical",
       "",
       {"hyperparameters.act={type: categorical, vals: [a, b], count: 2}"},
       "hyperparameters.act.count: unknown key; expected one of type, vals"},
      {"searcher without a metric",
       "entrypoint: mlp\nhyperparameters: {global_batch_size: 1}\n"
       "searcher: {name: single, max_length: {batches: 1}}\n",
       {},
       "searcher.metric: expected the name of a validation metric; got nothing"},
      {"searcher without max_length",
       "",
       {"searcher.max_length="},
       "searcher.max_length: expected a length such as {batches: 1000}; got null"},
      {"searcher key misspelt",
       "",
       {"searcher.metrik=loss"},
       "searcher.metrik: unknown key; did you mean 'metric'?"},
      {"ignored searcher key of the wrong type",
       "",
       {"searcher.max_trials=many"},
       "searcher.max_trials: expected an integer >= 1; got 'many'"},
      {"searcher key given twice",
       valid + "searcher:\n  metric: a\n",
       {},
       "searcher: given twice; expected each key once"},
      {"missing entrypoint",
       "",
       {"entrypoint="},
       "entrypoint: expected a plugin name or the path of a plugin .so; got null"},
      {"entrypoint as a launcher command",
       "",
       {"entrypoint=[python3, train.py]"},
       "entrypoint: expected a plugin name or the path of a plugin .so; got [python3, train.py]"},
      {"description as a map",
       "",
       {"description={a: 1}"},
       "description: expected a string; got {a: 1}"},
      {"top-level key misspelt",
       valid + "searchr: {}\n",
       {},
       "searchr: unknown key; did you mean 'searcher'?"},
      {"top-level key unknown",
       valid + "colour: red\n",
       {},
       "colour: unknown key; expected one of name, description, entrypoint, hyperparameters"},
      {"top level not a map",
       "just text",
       {},
       "experiment config: expected a map of keys at the top level; got 'just text'"},
      {"hyperparameters as a list",
       "",
       {"hyperparameters=[1, 2]"},
       "hyperparameters: expected a map of names to values or search spaces; got [1, 2]"},
      {"hyperparameter bound as text",
       "",
       {"hyperparameters.lr={type: double, minval: small, "
        "maxval: 1}"},
       "hyperparameters.lr.minval: expected a number; got 'small'"},
      {"int bound not an integer",
       "",
       {"hyperparameters.layers={type: int, minval: 1.5, "
        "maxval: 4}"},
       "hyperparameters.layers.minval: expected an integer; got 1.5"},
      {"minval above maxval",
       "",
       {"hyperparameters.dropout={type: double, minval: 0.5, "
        "maxval: 0.1}"},
       "hyperparameters.dropout.maxval: expected a number >= minval (0.5); got 0.1"},
      {"int minval above maxval",
       "",
       {"hyperparameters.width={type: int, minval: 9, maxval: 3}"},
       "hyperparameters.width.maxval: expected an integer >= minval (9); got 3"},
      {"missing maxval",
       "",
       {"hyperparameters.width={type: int, minval: 9}"},
       "hyperparameters.width.maxval: expected an integer; got nothing"},
      {"log base zero",
       "",
       {"hyperparameters.lr={type: log, minval: -4, maxval: -1, base: 0}"},
       "hyperparameters.lr.base: expected a number > 0; got 0"},
      {"categorical without values",
       "",
       {"hyperparameters.opt={type: categorical, vals: []}"},
       "hyperparameters.opt.vals: expected a non-empty list; got []"},
      {"unknown space type",
       "",
       {"hyperparameters.lr={type: float, minval: 0, maxval: 1}"},
       "hyperparameters.lr.type: expected one of const, int, double, log, categorical; got "
       "'float'"},
      {"nested space with unknown type",
       "",
       {"hyperparameters.optimizer={lr: {type: uniform}}"},
       "hyperparameters.optimizer.lr.type: expected one of const, int, double, log, categorical; "
       "got 'uniform'"},
      {"const without val",
       "",
       {"hyperparameters.c={type: const}"},
       "hyperparameters.c.val: expected the constant's value; got nothing"},
      {"unknown key in a space",
       "",
       {"hyperparameters.n={type: int, minval: 1, maxval: 2, "
        "step: 1}"},
       "hyperparameters.n.step: unknown key; expected one of type, minval, maxval, count"},
      {"name flattened twice",
       valid + "  a.b: 1\n  a: {b: 2}\n",
       {},
       "hyperparameters.a.b: given twice; expected each hyperparameter name once"},
      {"global batch size missing",
       "",
       {"hyperparameters={lr: 0.1}"},
       "hyperparameters.global_batch_size: expected an integer from 1 to 16777216 (the batch size "
       "of one step summed over all slots), or a search space of such integers (type int or "
       "categorical); got nothing"},
      {"global batch size zero",
       "",
       {"hyperparameters.global_batch_size=0"},
       "hyperparameters.global_batch_size: expected an integer from 1 to 16777216"},
      {"global batch size too large",
       "",
       {"hyperparameters.global_batch_size=4611686018427387904"},
       "hyperparameters.global_batch_size: expected an integer from 1 to 16777216 (the batch size "
       "of one step summed over all slots), or a search space of such integers (type int or "
       "categorical); got 4611686018427387904"},
      {"global batch size as a double",
       "",
       {"hyperparameters.global_batch_size=32.0"},
       "hyperparameters.global_batch_size: expected an integer from 1 to 16777216 (the batch size "
       "of one step summed over all slots), or a search space of such integers (type int or "
       "categorical); got 32.0"},
      {"global batch size searched over doubles",
       "",
       {"hyperparameters.global_batch_size={type: double, minval: 16, maxval: 64}"},
       "or a search space of such integers (type int or categorical); got {type: double, "
       "minval: 16, maxval: 64}"},
      {"global batch size searched below the slots",
       "",
       {"resources.slots_per_trial=8",
        "hyperparameters.global_batch_size={type: categorical, vals: [16, 4]}"},
       "hyperparameters.global_batch_size: expected an integer from resources.slots_per_trial (8) "
       "to 16777216, or a search space of such integers (type int or categorical); got {type: "
       "categorical, vals: [16, 4]}"},
      {"global batch size below slots",
       "",
       {"resources.slots_per_trial=8", "hyperparameters.global_batch_size=4"},
       "hyperparameters.global_batch_size: expected an integer from resources.slots_per_trial (8) "
       "to 16777216, or a search space of such integers (type int or categorical); got 4"},
      {"storage Determined has",
       "",
       {"checkpoint_storage={type: s3, bucket: b}"},
       "checkpoint_storage.type: expected shared_fs (Cohort writes checkpoints to a shared file "
       "system; Determined's s3 storage is not supported); got 's3'"},
      {"negative retention",
       "",
       {"checkpoint_storage.save_trial_best=-1"},
       "checkpoint_storage.save_trial_best: expected an integer >= 0; got -1"},
      {"storage path outside host path",
       "",
       {"checkpoint_storage={host_path: /mnt/a, storage_path: /elsewhere}"},
       "checkpoint_storage.storage_path: expected a folder inside host_path (a relative path, or "
       "an absolute one under host_path); got '/elsewhere'"},
      {"storage path climbing out",
       "",
       {"checkpoint_storage.storage_path=../up"},
       "checkpoint_storage.storage_path: expected a folder inside host_path"},
      {"records per epoch zero",
       "",
       {"records_per_epoch=0"},
       "records_per_epoch: expected an integer >= 1; got 0"},
      {"scheduling unit zero",
       "",
       {"scheduling_unit=0"},
       "scheduling_unit: expected an integer >= 1; got 0"},
      {"negative restarts",
       "",
       {"max_restarts=-1"},
       "max_restarts: expected an integer >= 0; got -1"},
      {"seed beyond Determined's bound",
       "",
       {"reproducibility.experiment_seed=2147483648"},
       "reproducibility.experiment_seed: expected an integer between 0 and 2147483647; got "
       "2147483648"},
      {"reproducibility key unknown",
       "",
       {"reproducibility.seed=1"},
       "reproducibility.seed: unknown key; expected one of experiment_seed"},
      {"checkpoint policy",
       "",
       {"checkpoint_policy=some"},
       "checkpoint_policy: expected one of best, all, none; got 'some'"},
      {"profiling window ending before it begins",
       "",
       {"profiling.begin_on_batch=50", "profiling.end_after_batch=10"},
       "profiling.end_after_batch: expected an integer >= profiling.begin_on_batch (50); got 10"},
      {"profiling window from a negative batch",
       "",
       {"profiling.begin_on_batch=-1"},
       "profiling.begin_on_batch: expected an integer >= 0; got -1"},
      {"profiling key unknown",
       "",
       {"profiling.every=2"},
       "profiling.every: unknown key; expected one of enabled, begin_on_batch, end_after_batch"},
      {"YAML syntax",
       "entrypoint: mlp\nsearcher: {name: single\n",
       {},
       "YAML syntax error at line 3, column 1"},
      {"bytes that are not UTF-8",
       valid + "description: caf\xe9 menu\n",
       {},
       "the config is not UTF-8 text: line 11, column 17 holds the byte 0xE9"},
      {"an override that is not UTF-8",
       "",
       {"description=\xff"},
       "--set description=\\xff: not UTF-8 text: byte 13 is 0xFF"},
  };
}

TEST(ConfigErrorsTest, EveryMalformedConfigNamesItsField) {
  const std::vector<MalformedCase> cases = Cases();
  ASSERT_GE(cases.size(), 30u);
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.label);
    absl::StatusOr<ExperimentConfig> config =
        ParseExperimentConfig(c.yaml.empty() ? kValidConfig : c.yaml, c.sets);
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(config.status().message()), ::testing::HasSubstr(c.message));
  }
}

TEST(ConfigErrorsTest, TheValidBaseParses) {
  absl::StatusOr<ExperimentConfig> config = ParseExperimentConfig(kValidConfig);
  EXPECT_TRUE(config.ok()) << config.status();
}

}  // namespace
}  // namespace cohort
