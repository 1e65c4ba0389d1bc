// DiagnoseFlights: which collective a trial's ranks stopped agreeing on, read from their flight
// records (flight_record.h), and which ranks are missing from it. What `cohort trial diagnose`
// prints and what a failed trial's error ends with.
//
//   std::vector<FlightRecord> records = ...;      // one per rank that left one
//   FlightDiagnosis found = DiagnoseFlights(records, /*world_size=*/2);
//   // found.summary: "host collective #57 (allreduce of 28672 bytes of float32: gradient
//   //   bucket 1, batch 41) is where the ranks part: rank 0 entered it; rank 1 is missing
//   //   from it (its last: #56 allgather, step check, batch 41, finished). ..."
//
// The rule: within a group every rank calls the same collectives in the same order, so the i-th
// collective of a group is the same one on every rank. The first collective some rank entered
// and not every rank finished is where the ranks part; a rank that never entered it is missing.
// Two ranks whose i-th collectives differ (kind, bytes or dtype) disagree outright, which is
// reported first. A rank whose record was last stamped well before the others' (its process
// stopped or gone) or that left no record is named as silent, and so is a rank its agent saw
// killed outside Cohort (`ended_outside`: a crash, the OOM killer, kill -9), which the record alone
// cannot tell when its peers failed within the same heartbeat; such a rank is named as the likely
// cause, with the collective it died in.
//
// Thread-safety: a pure function.
#ifndef COHORT_RUNTIME_OBSERVE_FLIGHT_DIAGNOSIS_H_
#define COHORT_RUNTIME_OBSERVE_FLIGHT_DIAGNOSIS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/observe/flight_record.h"

namespace cohort {

// A record stamped this much before the newest is silent (the heartbeat is every 0.1 s).
inline constexpr double kSilentAfterSeconds = 1.0;

struct FlightDiagnosis {
  // The first collective the ranks part at, described ("host collective #57 (allreduce ...)");
  // empty when every rank finished every collective it entered and none disagree.
  std::string collective;
  std::vector<uint32_t> entered;  // the ranks that entered it
  std::vector<uint32_t> missing;  // the ranks that did not
  // Ranks with no record, whose record stopped being stamped kSilentAfterSeconds before the
  // newest one while they had not ended, or that ended outside Cohort.
  std::vector<uint32_t> silent;
  std::string summary;             // what a person reads first, one paragraph
  std::vector<std::string> ranks;  // one line per rank: where it stands
};

// `ended_outside`: rank -> how its process ended, as its agent reported it ("was killed by
// signal 9"), for the ranks that ended by a signal Cohort did not send or were found stopped.
FlightDiagnosis DiagnoseFlights(const std::vector<FlightRecord>& records, uint32_t world_size,
                                const std::map<uint32_t, std::string>& ended_outside = {});

// "host collective #57 (allreduce of 28672 bytes of float32: gradient bucket 2, batch 41)".
std::string DescribeCollective(const FlightEntry& entry);

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_FLIGHT_DIAGNOSIS_H_
