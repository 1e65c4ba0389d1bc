#include "runtime/orchestrator/timeline_merger.h"

#include <utility>

#include "runtime/observe/timeline_files.h"
#include "runtime/observe/trace_writer.h"

namespace cohort {

TimelineMerger::TimelineMerger() : thread_([this] { Loop(); }) {}

TimelineMerger::~TimelineMerger() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void TimelineMerger::Merge(Request request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_.push_back(std::move(request));
  }
  changed_.notify_all();
}

std::vector<TimelineMerger::Done> TimelineMerger::TakeDone() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(done_, {});
}

bool TimelineMerger::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_ || !waiting_.empty() || !done_.empty();
}

void TimelineMerger::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // stopping, and every request is carried out
    Done done;
    done.request = std::move(waiting_.front());
    waiting_.pop_front();
    running_ = true;
    lock.unlock();
    const std::vector<std::string> files =
        TrialTimelinePaths(done.request.checkpoint_root, done.request.trial_id);
    done.files = files.size();
    if (!files.empty()) done.status = MergeTraces(files, done.request.out_path);
    lock.lock();
    running_ = false;
    done_.push_back(std::move(done));
  }
}

}  // namespace cohort
