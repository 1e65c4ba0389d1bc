#include "runtime/config/internal/map_reader.h"
#include "runtime/config/internal/section_readers.h"

namespace cohort::config_internal {

absl::Status ReadSearcher(const YAML::Node& node, std::vector<std::string>* ignored_keys,
                          SearcherConfig* out) {
  MapReader r(node, "searcher", ignored_keys);
  r.Require("name", "a searcher name (single)");
  r.SupportedChoice("name", "single",
                    {"random", "grid", "adaptive_asha", "pbt", "async_halving", "adaptive",
                     "adaptive_simple", "sync_halving", "custom"},
                    "searcher", "Cohort runs one trial per experiment", &out->name);
  r.AllowKeys({"name", "metric", "smaller_is_better", "max_length"},
              {"max_trials", "max_concurrent_trials", "mode", "max_rungs", "num_rungs", "divisor",
               "bracket_rungs", "stop_once", "budget", "train_stragglers", "source_trial_id",
               "source_checkpoint_uuid", "population_size", "num_rounds", "length_per_round",
               "replace_function", "explore_function"});
  r.Require("metric", "the name of a validation metric");
  r.String("metric", &out->metric);
  r.Bool("smaller_is_better", &out->smaller_is_better);
  r.Require("max_length", "a length such as {batches: 1000}");
  r.LengthField("max_length", 1, &out->max_length);
  // Ignored, but a wrong type there is still a mistake worth naming.
  r.ReadInt("max_trials", 1);
  r.ReadInt("max_concurrent_trials", 0);
  r.ReadInt("max_rungs", 1);
  r.ReadInt("num_rungs", 1);
  r.ReadNumber("divisor");
  r.ReadBool("stop_once");
  r.ReadInt("source_trial_id", 0);
  r.ReadString("source_checkpoint_uuid");
  std::string mode;
  r.Choice("mode", {"aggressive", "standard", "conservative"}, &mode);
  return r.status();
}

}  // namespace cohort::config_internal
