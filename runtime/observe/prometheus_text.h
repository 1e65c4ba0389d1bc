// PrometheusText: builds a page in Prometheus's text exposition format (version 0.0.4), the one
// /metrics endpoints serve. Each family gets its # HELP and # TYPE lines once, before its first
// sample; label values are escaped (backslash, double quote, newline).
//
//   PrometheusText page;
//   page.Gauge("cohort_agent_slots", "Slots this agent offers.", 8);
//   page.Counter("cohort_agent_task_records_total", "Records a task has trained.", 6400,
//                {{"task", "17"}, {"trial", "3"}});
//   std::string text = page.Text();
//
// Thread-safety: not thread-safe; build a page on one thread.
#ifndef COHORT_RUNTIME_OBSERVE_PROMETHEUS_TEXT_H_
#define COHORT_RUNTIME_OBSERVE_PROMETHEUS_TEXT_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace cohort {

// The content type of the page.
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

class PrometheusText {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  // A sample of a gauge (a value that goes up and down) or a counter (one that only grows, named
  // with the _total suffix by convention). Samples of one family must be added together.
  void Gauge(absl::string_view name, absl::string_view help, double value,
             const Labels& labels = {});
  void Counter(absl::string_view name, absl::string_view help, double value,
               const Labels& labels = {});

  const std::string& Text() const { return text_; }

 private:
  void Sample(absl::string_view type, absl::string_view name, absl::string_view help, double value,
              const Labels& labels);

  std::string text_;
  std::set<std::string, std::less<>> families_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_PROMETHEUS_TEXT_H_
