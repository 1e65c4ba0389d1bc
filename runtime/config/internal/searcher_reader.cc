#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "runtime/config/internal/map_reader.h"
#include "runtime/config/internal/section_readers.h"
#include "runtime/config/internal/yaml_values.h"

namespace cohort::config_internal {
namespace {

// Rungs beyond this would train for less than one batch at any realistic length.
constexpr int64_t kMaxRungs = 64;

// Every key of Determined's searcher configs, in the order errors list them.
constexpr std::array<absl::string_view, 23> kDeterminedKeys = {"name",
                                                               "metric",
                                                               "smaller_is_better",
                                                               "max_length",
                                                               "max_time",
                                                               "time_metric",
                                                               "max_trials",
                                                               "max_concurrent_trials",
                                                               "mode",
                                                               "divisor",
                                                               "max_rungs",
                                                               "bracket_rungs",
                                                               "stop_once",
                                                               "num_rungs",
                                                               "budget",
                                                               "train_stragglers",
                                                               "source_trial_id",
                                                               "source_checkpoint_uuid",
                                                               "population_size",
                                                               "num_rounds",
                                                               "length_per_round",
                                                               "replace_function",
                                                               "explore_function"};

// The keys `searcher` reads beyond name, metric, smaller_is_better and max_length.
std::vector<absl::string_view> ExtraKeysOf(absl::string_view searcher) {
  if (searcher == "random") return {"max_trials", "max_concurrent_trials"};
  if (searcher == "grid") return {"max_concurrent_trials"};
  if (searcher == "adaptive_asha") {
    return {"max_trials", "max_concurrent_trials", "mode", "divisor", "max_rungs", "bracket_rungs"};
  }
  return {};
}

}  // namespace

std::vector<std::string> SearchersReading(absl::string_view key) {
  std::vector<std::string> readers;
  for (absl::string_view searcher : {"single", "grid", "random", "adaptive_asha"}) {
    const std::vector<absl::string_view> extra = ExtraKeysOf(searcher);
    if (std::find(extra.begin(), extra.end(), key) != extra.end()) readers.emplace_back(searcher);
  }
  return readers;
}

namespace {

// `bracket_rungs`: null or a list of rung counts.
void ReadBracketRungs(MapReader& r, std::vector<uint32_t>* out) {
  if (!r.ok() || !r.Has("bracket_rungs")) return;
  const YAML::Node list = r.Get("bracket_rungs");
  std::vector<uint32_t> rungs;
  bool valid = list.IsSequence();
  for (size_t i = 0; valid && i < list.size(); ++i) {
    const std::optional<int64_t> value = PlainInt(list[i]);
    valid = value && *value >= 1 && *value <= kMaxRungs;
    if (valid) rungs.push_back(static_cast<uint32_t>(*value));
  }
  if (!valid) {
    return r.Fail(Mismatch(
        r.PathOf("bracket_rungs"),
        absl::StrCat("a list of rung counts, each an integer between 1 and ", kMaxRungs), list));
  }
  *out = std::move(rungs);
}

// `max_length`, or Determined's newer `max_time` with `time_metric` (batches, records or epochs,
// the names of Cohort's lengths; Determined also takes any validation metric that counts).
void ReadMaxLength(MapReader& r, SearcherConfig* out) {
  if (!r.Has("max_time") && !r.Has("time_metric")) {
    r.Require("max_length", "a length such as {batches: 1000} (or max_time with time_metric)");
    r.LengthField("max_length", 1, &out->max_length);
    return;
  }
  if (r.Has("max_length")) {
    return r.Fail(absl::InvalidArgumentError(absl::StrCat(
        "searcher.max_length and searcher.", r.Has("max_time") ? "max_time" : "time_metric",
        ": expected max_length, or max_time with time_metric; got both (a config written with "
        "max_time changes its length with --set searcher.max_time=N)")));
  }
  r.Require("max_time", "an integer >= 1, the length in time_metric");
  r.Require("time_metric", "batches, records or epochs");
  const std::optional<int64_t> max_time = r.ReadInt("max_time", 1);
  std::string unit;
  r.SupportedChoice("time_metric", {"batches", "records", "epochs"}, {}, "time_metric", "", &unit);
  if (!r.ok() || !max_time) return;
  out->max_length.value = static_cast<uint64_t>(*max_time);
  out->max_length.unit = unit == "records"  ? LengthUnit::kRecords
                         : unit == "epochs" ? LengthUnit::kEpochs
                                            : LengthUnit::kBatches;
  out->max_length_as_time = true;
}

}  // namespace

absl::Status ReadSearcher(const YAML::Node& node, std::vector<std::string>* ignored_keys,
                          SearcherConfig* out) {
  MapReader r(node, "searcher", ignored_keys);
  r.Require("name", "a searcher name (single, grid, random, adaptive_asha)");
  r.SupportedChoice(
      "name", {"single", "grid", "random", "adaptive_asha"},
      {"pbt", "async_halving", "adaptive", "adaptive_simple", "sync_halving", "custom"}, "searcher",
      "", &out->name);
  if (!r.ok()) return r.status();

  std::vector<absl::string_view> used = {"name",       "metric",   "smaller_is_better",
                                         "max_length", "max_time", "time_metric"};
  const std::vector<absl::string_view> extra = ExtraKeysOf(out->name);
  used.insert(used.end(), extra.begin(), extra.end());
  auto uses = [&used](absl::string_view key) {
    return std::find(used.begin(), used.end(), key) != used.end();
  };
  std::vector<absl::string_view> ignored;
  for (absl::string_view key : kDeterminedKeys) {
    if (!uses(key)) ignored.push_back(key);
  }
  r.AllowKeys(used, ignored);

  r.Require("metric", "the name of a validation metric");
  r.String("metric", &out->metric);
  r.Bool("smaller_is_better", &out->smaller_is_better);
  ReadMaxLength(r, out);
  if (uses("max_trials")) r.Require("max_trials", "an integer >= 1 (the number of trials)");

  // Every typed key is checked, even where this searcher ignores it: a wrong type is a typo.
  const std::optional<int64_t> max_trials = r.ReadInt("max_trials", 1);
  const std::optional<int64_t> max_concurrent = r.ReadInt("max_concurrent_trials", 0);
  const std::optional<int64_t> max_rungs = r.ReadInt("max_rungs", 1, kMaxRungs);
  const std::optional<double> divisor = r.ReadNumber("divisor");
  if (divisor && *divisor <= 1) {
    r.Fail(Mismatch(r.PathOf("divisor"), "a number > 1", r.Get("divisor")));
  }
  AshaMode mode = out->mode;
  r.PolicyChoice("mode", &mode);
  std::vector<uint32_t> bracket_rungs;
  ReadBracketRungs(r, &bracket_rungs);
  r.ReadInt("num_rungs", 1);
  r.ReadBool("stop_once");
  r.ReadInt("source_trial_id", 0);
  r.ReadString("source_checkpoint_uuid");
  if (!r.ok()) return r.status();

  if (max_trials && uses("max_trials")) out->max_trials = static_cast<uint64_t>(*max_trials);
  if (max_concurrent && uses("max_concurrent_trials")) {
    out->max_concurrent_trials = static_cast<uint64_t>(*max_concurrent);
  }
  if (out->name == "adaptive_asha") {
    out->mode = mode;
    out->bracket_rungs = std::move(bracket_rungs);
    if (max_rungs) out->max_rungs = static_cast<uint32_t>(*max_rungs);
    if (divisor) out->divisor = *divisor;
  }
  return absl::OkStatus();
}

}  // namespace cohort::config_internal
