#include "runtime/trial/bucket_trace.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace cohort {

void TraceBucket(TraceWriter& trace, const GradientExchange::BucketTimeline& bucket) {
  const uint64_t batch = bucket.batch + 1;
  if (!trace.Keeps(batch)) return;
  const std::string name = absl::StrCat("bucket ", bucket.bucket + 1);
  trace.Instant(TraceWriter::kTrainingThread, absl::StrCat(name, " ready"), bucket.ready, batch);
  trace.Complete(TraceWriter::kExchangeThread, name, bucket.begin, bucket.end, batch);
  double codec_from = bucket.begin;
  for (const TimedCollective::Call& call : bucket.collectives) {
    if (call.begin > codec_from) {
      trace.Complete(TraceWriter::kExchangeThread, "codec", codec_from, call.begin, batch);
    }
    trace.Complete(TraceWriter::kExchangeThread, call.name, call.begin, call.end, batch,
                   call.bytes);
    codec_from = call.end;
  }
  if (bucket.end > codec_from) {
    trace.Complete(TraceWriter::kExchangeThread, "codec", codec_from, bucket.end, batch);
  }
}

}  // namespace cohort
