// Dashboard: the orchestrator's live web dashboard (`cohort orchestrator --web-address`). Once a
// second, on the orchestrator's loop, Refresh takes a snapshot of the cluster through the client
// protocol's own requests (the replies the CLI gets) and keeps it as JSON; an HttpEndpoint thread
// answers from that snapshot and from the trials' files in the state directory, so a page view
// never touches the orchestrator's state:
//
//   GET /                             the page (dashboard_page.h)
//   GET /api/experiments              every experiment, archived ones too (experiment list --json)
//   GET /api/experiments/ID           one experiment (experiment describe --json)
//   GET /api/trials/ID                one trial (trial describe --json, without validations;
//                                     its checkpoints as kCheckpointListingSeconds says)
//   GET /api/trials/ID/metrics        its metrics.jsonl as a JSON array of reports: every
//                                     validation, training reports thinned evenly to 2,000
//   GET /api/trials/ID/logs[?lines=N] the last N lines (default 200, at most 5,000) of its log
//   GET /api/tasks, /api/agents       task list --json, agent list --json
//
// Read-only: nothing changes the cluster. With a token, every request must carry it (`?token=T`
// or `Authorization: Bearer T`), else 401; the page passes on the token of its own address.
//
// Thread-safety: Refresh on one thread (the orchestrator's loop); requests on the endpoint's.
#ifndef COHORT_HARNESS_COHORT_WEB_DASHBOARD_H_
#define COHORT_HARNESS_COHORT_WEB_DASHBOARD_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/base/clock.h"
#include "runtime/client/client_messages.h"
#include "runtime/observe/http_endpoint.h"

namespace cohort {

struct DashboardOptions {
  ListenAddress address;
  std::string state_dir;  // the orchestrator's: experiments/<id>/trials/<trial>/...
  std::string token;      // empty: none needed (loopback only; the caller enforces it)
  Clock* clock = nullptr;  // when the checkpoint listings were taken; nullptr: SystemClock()
};

// How long an active experiment's checkpoint listing is used while none of its trials' best or
// latest checkpoints changes: taking it reads every kept checkpoint's manifest in storage (on the
// orchestrator's loop), too much to do every second for an experiment of many trials, and what
// it shows beyond the ids (a folder damaged or removed outside Cohort) is seen this much later.
inline constexpr double kCheckpointListingSeconds = 30;

class Dashboard {
 public:
  using Ask = std::function<ClientMessage(const ClientMessage& request)>;

  // Loads the chart library (LoadChartLibrary's error when it is missing) and starts serving.
  static absl::StatusOr<std::unique_ptr<Dashboard>> Start(DashboardOptions options);
  Dashboard(const Dashboard&) = delete;
  Dashboard& operator=(const Dashboard&) = delete;

  uint16_t port() const { return http_->port(); }

  // Takes a new snapshot, asking `ask` the read-only requests of every view.
  void Refresh(const Ask& ask);

 private:
  explicit Dashboard(DashboardOptions options) : options_(std::move(options)) {}
  HttpReply Answer(const HttpRequest& request);
  struct TakenListing;
  // The active experiment's checkpoint listing: the one taken before while
  // kCheckpointListingSeconds have not passed and its trials' checkpoint ids are the same, else a
  // new one; kept in `listings`.
  const ClientMessage& CheckpointsOf(const ExperimentDescription& description, const Ask& ask,
                                     double now, std::map<uint64_t, TakenListing>& listings);
  // /api/trials/ID/metrics and /logs, read from the trial's folder.
  HttpReply TrialFile(uint64_t trial_id, const std::string& what, const HttpRequest& request);

  const DashboardOptions options_;
  std::string page_;
  // The documents of each ended experiment (its description and its trials'), taken once; only
  // Refresh's thread uses them.
  struct EndedExperiment {
    std::map<std::string, std::string> documents;
    std::vector<uint64_t> trial_ids;
    bool archived = false;  // as its documents say it: taken again when that changes
  };
  std::map<uint64_t, EndedExperiment> ended_;
  // Each active experiment's last checkpoint listing, with its trials' checkpoint ids then and
  // when it was taken; only Refresh's thread uses them.
  struct TakenListing {
    std::string checkpoint_ids;
    double taken_at = 0;
    ClientMessage reply;
  };
  std::map<uint64_t, TakenListing> listings_;
  std::mutex mutex_;
  std::map<std::string, std::string> documents_;   // path -> JSON; guarded by mutex_
  std::map<uint64_t, uint64_t> trial_experiment_;  // trial id -> experiment id; by mutex_
  std::unique_ptr<HttpEndpoint> http_;             // last: stopped before what it reads goes
};

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_WEB_DASHBOARD_H_
