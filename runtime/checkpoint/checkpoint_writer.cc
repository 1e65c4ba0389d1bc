#include "runtime/checkpoint/checkpoint_writer.h"

#include <chrono>
#include <memory>
#include <system_error>
#include <utility>

namespace cohort {
namespace {

// Writes `files` as checkpoint `info`; `begin` is the caller's clock at the start.
WrittenCheckpoint WriteCheckpoint(CheckpointStorage& storage, double begin, CheckpointInfo info,
                                  std::map<std::string, std::string> files,
                                  const CheckpointWriter::Prepare& prepare) {
  const auto started = std::chrono::steady_clock::now();
  WrittenCheckpoint written;
  written.status = prepare ? prepare(files) : absl::OkStatus();
  if (written.status.ok()) {
    written.status = storage.Write(info, files);
    if (absl::IsAlreadyExists(written.status)) written.status = absl::OkStatus();
  }
  for (const auto& [name, contents] : files) written.bytes += contents.size();
  written.files = std::move(files);
  written.info = std::move(info);
  written.begin = begin;
  written.end =
      begin + std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return written;
}

}  // namespace

CheckpointWriter::~CheckpointWriter() { Wait(); }

void CheckpointWriter::Start(CheckpointInfo info, std::map<std::string, std::string> files,
                             Prepare prepare) {
  auto job = std::make_shared<std::packaged_task<WrittenCheckpoint()>>(
      [storage = storage_, begin = clock_->MonotonicSeconds(), info = std::move(info),
       files = std::move(files), prepare = std::move(prepare)]() mutable {
        return WriteCheckpoint(*storage, begin, std::move(info), std::move(files), prepare);
      });
  in_flight_ = job->get_future();
  try {
    thread_ = std::thread([job] { (*job)(); });
  } catch (const std::system_error&) {
    (*job)();  // no thread to be had: written here and now instead
  }
}

std::optional<WrittenCheckpoint> CheckpointWriter::TakeIfDone() {
  if (!in_flight_.valid() ||
      in_flight_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    return std::nullopt;
  }
  return Wait();
}

std::optional<WrittenCheckpoint> CheckpointWriter::Wait() {
  if (!in_flight_.valid()) return std::nullopt;
  WrittenCheckpoint written = in_flight_.get();
  if (thread_.joinable()) thread_.join();
  return written;
}

}  // namespace cohort
