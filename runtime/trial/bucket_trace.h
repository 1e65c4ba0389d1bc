// How one gradient bucket's exchange shows in a rank's timeline:
//   - on the training thread, an instant "bucket N ready" when its gradients were all ready;
//   - on the exchange thread, a slice "bucket N" over its exchange, holding one slice per
//     collective call ("allreduce", "allgather", ..., with the bytes it moved) and a "codec"
//     slice for each stretch between them (scaling, encoding, selecting, decoding).
// Every slice carries the batch (from 1) the bucket belongs to.
#ifndef COHORT_RUNTIME_TRIAL_BUCKET_TRACE_H_
#define COHORT_RUNTIME_TRIAL_BUCKET_TRACE_H_

#include "runtime/exchange/gradient_exchange.h"
#include "runtime/observe/trace_writer.h"

namespace cohort {

// Writes `bucket`'s events to `trace`: the parent slice before the slices inside it.
void TraceBucket(TraceWriter& trace, const GradientExchange::BucketTimeline& bucket);

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_BUCKET_TRACE_H_
