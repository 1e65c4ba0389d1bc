#include "runtime/orchestrator/provisioner_calls.h"

#include <utility>

namespace cohort {

ProvisionerCalls::ProvisionerCalls(AgentProvisioner& provisioner, bool background)
    : provisioner_(provisioner) {
  if (background) thread_ = std::thread([this] { Serve(); });
}

ProvisionerCalls::~ProvisionerCalls() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    // Only the cancels are still worth running.
    std::erase_if(requests_, [](const Request& request) {
      return !std::holds_alternative<CancelRequest>(request);
    });
  }
  asked_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (const Answer& answer : answers_) {
    const auto* submitted = std::get_if<Submitted>(&answer);
    if (submitted != nullptr && submitted->job.ok()) {
      provisioner_.Cancel(submitted->job->id).IgnoreError();  // nobody is left to hear an error
    }
  }
}

void ProvisionerCalls::Submit(ProvisionRequest request) { Ask(std::move(request)); }

void ProvisionerCalls::Poll(std::vector<std::string> job_ids) {
  ++polls_asked_;
  Ask(PollRequest{std::move(job_ids)});
}

void ProvisionerCalls::Cancel(std::string job_id) { Ask(CancelRequest{std::move(job_id)}); }

std::vector<ProvisionerCalls::Answer> ProvisionerCalls::TakeAnswers() {
  std::vector<Answer> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(answers_);
  }
  for (const Answer& answer : taken) {
    if (std::holds_alternative<Polled>(answer)) ++polls_taken_;
  }
  return taken;
}

void ProvisionerCalls::Ask(Request request) {
  if (!thread_.joinable()) {
    Answer answer = Run(request);
    std::lock_guard lock(mutex_);
    answers_.push_back(std::move(answer));
    return;
  }
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(std::move(request));
  }
  asked_.notify_one();
}

ProvisionerCalls::Answer ProvisionerCalls::Run(const Request& request) {
  if (const auto* submit = std::get_if<ProvisionRequest>(&request)) {
    return Submitted{submit->task_id, provisioner_.Submit(*submit)};
  }
  if (const auto* poll = std::get_if<PollRequest>(&request)) {
    return Polled{provisioner_.States(poll->job_ids)};
  }
  const std::string& job_id = std::get<CancelRequest>(request).job_id;
  return Cancelled{job_id, provisioner_.Cancel(job_id)};
}

void ProvisionerCalls::Serve() {
  std::unique_lock lock(mutex_);
  while (true) {
    asked_.wait(lock, [this] { return stopping_ || !requests_.empty(); });
    if (requests_.empty()) return;  // stopping, and nothing left to run
    Request request = std::move(requests_.front());
    requests_.pop_front();
    lock.unlock();
    Answer answer = Run(request);
    lock.lock();
    answers_.push_back(std::move(answer));
  }
}

}  // namespace cohort
