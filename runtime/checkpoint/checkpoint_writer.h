// CheckpointWriter: writes a trial's checkpoints on a thread of its own, so that training goes on
// while the files reach storage (checkpoint_storage.async). The caller captures the state (a copy
// in host memory) at a step boundary and hands it over; at most one write is in flight, and the
// next one waits for it. A write is whole or absent as CheckpointStorage promises, so a crash
// while one runs leaves the checkpoints before it as they were.
//
//   CheckpointWriter writer(storage, &SystemClock());
//   writer.Start(info, std::move(files));          // returns at once
//   ... train ...
//   if (std::optional<WrittenCheckpoint> done = writer.TakeIfDone()) report(*done);
//   std::optional<WrittenCheckpoint> last = writer.Wait();   // before the next Start, or at the
//   end
//
// Thread-safety: one thread calls Start, TakeIfDone and Wait; the write runs on another, which
// touches only the storage (whose methods may run concurrently).
#ifndef COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_WRITER_H_
#define COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_WRITER_H_

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "runtime/base/clock.h"
#include "runtime/checkpoint/checkpoint_info.h"
#include "runtime/checkpoint/checkpoint_storage.h"

namespace cohort {

// One finished write.
struct WrittenCheckpoint {
  CheckpointInfo info;
  uint64_t bytes = 0;  // the files' sizes together
  // OK when the checkpoint is whole in storage (also when an identical one already was: the same
  // trial after the same batches writes the same checkpoint); else why it is absent.
  absl::Status status;
  // The clock's monotonic seconds when Start was called, and then when the write ended (measured
  // on the writing thread, which never reads the clock).
  double begin = 0;
  double end = 0;
  // The files handed to Start, given back: the next checkpoint's capture may reuse their memory.
  std::map<std::string, std::string> files;
};

class CheckpointWriter {
 public:
  // `storage` and `clock` must outlive the writer; the clock is read on the caller's thread only.
  CheckpointWriter(CheckpointStorage* storage, Clock* clock) : storage_(storage), clock_(clock) {}
  // Waits for a write in flight: a checkpoint started is finished, not abandoned.
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Starts writing `files` as checkpoint `info` (see CheckpointStorage::Write) and returns;
  // `prepare`, when given, first finishes the files on the writing thread, and when it fails
  // nothing is written and its error is the write's. Requires that no write is in flight (Wait,
  // or a TakeIfDone that returned it, came since the last Start).
  using Prepare = std::function<absl::Status(std::map<std::string, std::string>&)>;
  void Start(CheckpointInfo info, std::map<std::string, std::string> files,
             Prepare prepare = nullptr);

  // The write in flight once it has finished, without waiting; nullopt while it runs, or when
  // there is none.
  std::optional<WrittenCheckpoint> TakeIfDone();

  // Waits for the write in flight and returns it; nullopt when there is none.
  std::optional<WrittenCheckpoint> Wait();

 private:
  CheckpointStorage* storage_;
  Clock* clock_;
  std::future<WrittenCheckpoint> in_flight_;
  std::thread thread_;  // the write in flight's, joined by Wait
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_CHECKPOINT_CHECKPOINT_WRITER_H_
