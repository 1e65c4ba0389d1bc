#include "harness/cohort/web/dashboard.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "harness/cohort/format/experiment_json.h"
#include "harness/cohort/web/dashboard_page.h"
#include "runtime/record/json_writer.h"

namespace cohort {
namespace {

constexpr size_t kDefaultLogLines = 200;
constexpr size_t kMostLogLines = 5000;
constexpr size_t kMostTrainingReports = 2000;
constexpr char kJson[] = "application/json";

HttpReply NotFound(absl::string_view what) {
  return HttpReply{404, "text/plain", absl::StrCat(what, "\n")};
}

// The reply's JSON when it is a `Reply`, else nothing (an error the dashboard leaves out).
template <typename Reply, typename Format>
std::optional<std::string> JsonOf(const ClientMessage& reply, Format format) {
  const auto* typed = std::get_if<Reply>(&reply);
  if (typed == nullptr) return std::nullopt;
  return format(*typed);
}

// Whether the request carries `token`, as ?token= or as a bearer token.
bool Authorized(const HttpRequest& request, const std::string& token) {
  if (token.empty()) return true;
  if (auto found = request.query.find("token"); found != request.query.end()) {
    return found->second == token;
  }
  auto header = request.headers.find("authorization");
  return header != request.headers.end() && header->second == absl::StrCat("Bearer ", token);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Dashboard>> Dashboard::Start(DashboardOptions options) {
  absl::StatusOr<ChartLibrary> charts = LoadChartLibrary();
  if (!charts.ok()) return charts.status();
  std::unique_ptr<Dashboard> dashboard(new Dashboard(std::move(options)));
  dashboard->page_ = DashboardPage(*charts);
  Dashboard* self = dashboard.get();
  absl::StatusOr<std::unique_ptr<HttpEndpoint>> http =
      HttpEndpoint::Start(self->options_.address, "the dashboard",
                          [self](const HttpRequest& request) { return self->Answer(request); });
  if (!http.ok()) return http.status();
  dashboard->http_ = *std::move(http);
  return dashboard;
}

const ClientMessage& Dashboard::CheckpointsOf(const ExperimentDescription& description,
                                              const Ask& ask, double now,
                                              std::map<uint64_t, TakenListing>& listings) {
  std::string ids;
  for (const TrialSummary& trial : description.trials) {
    absl::StrAppend(&ids, trial.trial_id, ":", trial.latest_checkpoint_id, ":",
                    trial.best_checkpoint_id, ";");
  }
  const uint64_t experiment_id = description.summary.experiment_id;
  TakenListing& kept = listings[experiment_id];
  const auto before = listings_.find(experiment_id);
  if (before != listings_.end() && before->second.checkpoint_ids == ids &&
      now - before->second.taken_at < kCheckpointListingSeconds) {
    kept = before->second;
  } else {
    kept = TakenListing{ids, now, ask(ListCheckpoints{experiment_id, 0})};
  }
  return kept.reply;
}

void Dashboard::Refresh(const Ask& ask) {
  const double now =
      (options_.clock != nullptr ? *options_.clock : SystemClock()).MonotonicSeconds();
  std::map<uint64_t, TakenListing> listings;  // the active experiments' of this snapshot
  std::map<std::string, std::string> documents;
  std::map<uint64_t, uint64_t> trial_experiment;
  const ClientMessage list = ask(ListExperiments{/*include_archived=*/true});
  if (auto json = JsonOf<ExperimentList>(list, ExperimentListJson)) {
    documents["/api/experiments"] = *json;
  }
  if (const auto* experiments = std::get_if<ExperimentList>(&list)) {
    std::map<uint64_t, EndedExperiment> ended;
    for (const ExperimentSummary& summary : experiments->experiments) {
      // An ended experiment changes no more but for its archived flag: its documents are taken
      // once, not every second, and again when it is archived or unarchived.
      const bool has_ended = ExperimentEnded(summary.state);
      if (auto kept = ended_.find(summary.experiment_id);
          has_ended && kept != ended_.end() && kept->second.archived == summary.archived) {
        for (const auto& [path, json] : kept->second.documents) documents[path] = json;
        for (const uint64_t trial_id : kept->second.trial_ids) {
          trial_experiment[trial_id] = summary.experiment_id;
        }
        ended.insert(*kept);
        continue;
      }
      std::map<std::string, std::string> mine;  // this experiment's documents
      const ClientMessage described = ask(DescribeExperiment{summary.experiment_id});
      const auto* description = std::get_if<ExperimentDescription>(&described);
      if (description == nullptr) continue;
      mine[absl::StrCat("/api/experiments/", summary.experiment_id)] =
          ExperimentDescriptionJson(*description);
      // Each trial's view: its row of the description and its checkpoints (no validations:
      // the page draws them from the trial's reports, and reading them here would cost the
      // orchestrator's loop a pass over every trial's file every second).
      // An experiment that has just ended is listed afresh: that listing is its last.
      const ClientMessage listed = has_ended ? ask(ListCheckpoints{summary.experiment_id, 0})
                                             : CheckpointsOf(*description, ask, now, listings);
      const auto* checkpoints = std::get_if<CheckpointListing>(&listed);
      for (const TrialSummary& trial : description->trials) {
        trial_experiment[trial.trial_id] = summary.experiment_id;
        TrialDescription view{summary.experiment_id,
                              summary.name,
                              description->searcher_metric,
                              description->smaller_is_better,
                              trial,
                              {},
                              {}};
        if (checkpoints != nullptr) {
          for (const CheckpointRow& row : checkpoints->checkpoints) {
            if (row.trial_id == trial.trial_id) view.checkpoints.push_back(row);
          }
        }
        mine[absl::StrCat("/api/trials/", trial.trial_id)] = TrialDescriptionJson(view);
      }
      for (const auto& [path, json] : mine) documents[path] = json;
      if (has_ended) {
        EndedExperiment& kept = ended[summary.experiment_id];
        kept.documents = std::move(mine);
        kept.archived = summary.archived;
        for (const TrialSummary& trial : description->trials) {
          kept.trial_ids.push_back(trial.trial_id);
        }
      }
    }
    ended_ = std::move(ended);  // deleted experiments are forgotten
    listings_ = std::move(listings);
  }
  if (auto json = JsonOf<TaskListing>(ask(ListTasks{}), TaskListingJson)) {
    documents["/api/tasks"] = *json;
  }
  if (auto json = JsonOf<AgentTable>(ask(ListAgents{}), AgentTableJson)) {
    documents["/api/agents"] = *json;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  documents_ = std::move(documents);
  trial_experiment_ = std::move(trial_experiment);
}

HttpReply Dashboard::Answer(const HttpRequest& request) {
  if (!Authorized(request, options_.token)) {
    return HttpReply{401, "text/plain",
                     "this dashboard needs its token: open it as http://HOST:PORT/?token=...\n"};
  }
  if (request.path == "/" || request.path == "/index.html") {
    return HttpReply{200, "text/html; charset=utf-8", page_};
  }
  // /api/trials/ID/metrics and /api/trials/ID/logs
  const std::vector<std::string> parts = absl::StrSplit(request.path, '/', absl::SkipEmpty());
  uint64_t trial_id = 0;
  if (parts.size() == 4 && parts[0] == "api" && parts[1] == "trials" &&
      absl::SimpleAtoi(parts[2], &trial_id) && (parts[3] == "metrics" || parts[3] == "logs")) {
    return TrialFile(trial_id, parts[3], request);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = documents_.find(request.path);
  if (found == documents_.end()) return NotFound(absl::StrCat("nothing at ", request.path));
  return HttpReply{200, kJson, found->second};
}

HttpReply Dashboard::TrialFile(uint64_t trial_id, const std::string& what,
                               const HttpRequest& request) {
  uint64_t experiment_id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = trial_experiment_.find(trial_id);
    if (found == trial_experiment_.end()) return NotFound(absl::StrCat("no trial ", trial_id));
    experiment_id = found->second;
  }
  const std::string folder =
      absl::StrCat(options_.state_dir, "/experiments/", experiment_id, "/trials/", trial_id);
  std::ifstream file(folder + (what == "metrics" ? "/metrics.jsonl" : "/log.txt"));
  std::string line;
  if (what == "metrics") {
    // Each line is one report's JSON; a line still being written (no closing brace) waits.
    // Every validation is kept; training reports are thinned evenly to at most
    // kMostTrainingReports, the last one always among them.
    std::vector<std::string> reports;
    std::vector<bool> training;
    while (std::getline(file, line)) {
      if (line.empty() || line.front() != '{' || line.back() != '}') continue;
      training.push_back(absl::StrContains(line, "\"kind\":\"training\""));
      reports.push_back(std::move(line));
    }
    const size_t trainings =
        static_cast<size_t>(std::count(training.begin(), training.end(), true));
    const size_t stride = (trainings + kMostTrainingReports - 1) / kMostTrainingReports;
    std::string array = "[";
    size_t seen = 0;
    for (size_t i = 0; i < reports.size(); ++i) {
      if (training[i] && stride > 1 && seen++ % stride != 0 && seen != trainings) continue;
      if (array.size() > 1) array += ',';
      array += reports[i];
    }
    return HttpReply{200, kJson, array + "]"};
  }
  size_t lines = kDefaultLogLines;
  if (auto asked = request.query.find("lines"); asked != request.query.end()) {
    size_t parsed = 0;
    if (absl::SimpleAtoi(asked->second, &parsed)) lines = std::min(parsed, kMostLogLines);
  }
  std::deque<std::string> tail;
  while (std::getline(file, line)) {
    tail.push_back(std::move(line));
    if (tail.size() > lines) tail.pop_front();
  }
  JsonWriter json;
  json.BeginArray();
  for (const std::string& kept : tail) json.String(kept);
  json.EndArray();
  return HttpReply{200, kJson, json.text()};
}

}  // namespace cohort
