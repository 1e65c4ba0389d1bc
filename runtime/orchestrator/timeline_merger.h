// TimelineMerger: merges trials' rank timelines (TrialTimelinePaths, MergeTraces) into one
// timeline.json per trial on its own thread, so the orchestrator's loop never waits on the files
// (a long trial's timeline runs to hundreds of megabytes).
//
//   merger.Merge({.trial_id = 7, .checkpoint_root = root, .out_path = dir + "/timeline.json"});
//   for (const TimelineMerger::Done& done : merger.TakeDone()) Log(done);
//
// Requests are carried out in order; each merges every rank file of the trial found when it
// runs, and replaces out_path whole. The destructor carries out every request made first.
//
// Thread-safety: Merge, TakeDone and busy may be called from any thread.
#ifndef COHORT_RUNTIME_ORCHESTRATOR_TIMELINE_MERGER_H_
#define COHORT_RUNTIME_ORCHESTRATOR_TIMELINE_MERGER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace cohort {

class TimelineMerger {
 public:
  struct Request {
    uint64_t trial_id = 0;
    std::string checkpoint_root;  // where the trial's ranks wrote their timelines
    std::string out_path;
  };
  struct Done {
    Request request;
    size_t files = 0;     // rank timelines merged; 0: none found, out_path untouched
    absl::Status status;  // why the merge failed
  };

  TimelineMerger();
  ~TimelineMerger();
  TimelineMerger(const TimelineMerger&) = delete;
  TimelineMerger& operator=(const TimelineMerger&) = delete;

  void Merge(Request request);
  // The requests carried out since the last call, in order.
  std::vector<Done> TakeDone();
  // Whether a request is waiting, running, or done but not yet taken.
  bool busy() const;

 private:
  void Loop();

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Request> waiting_;
  bool running_ = false;
  std::vector<Done> done_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_ORCHESTRATOR_TIMELINE_MERGER_H_
