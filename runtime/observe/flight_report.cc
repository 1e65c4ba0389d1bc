#include "runtime/observe/flight_report.h"

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/observe/flight_files.h"
#include "runtime/observe/json_quote.h"

namespace cohort {
namespace {

std::string RanksJson(const std::vector<uint32_t>& ranks) {
  return absl::StrCat("[", absl::StrJoin(ranks, ","), "]");
}

std::string EntryJson(const FlightEntry& e) {
  return absl::StrCat("{\"seq\":", e.seq, ",\"group\":", JsonQuoted(FlightGroupName(e.group)),
                      ",\"kind\":", JsonQuoted(CollectiveKindName(e.kind)),
                      ",\"purpose\":", JsonQuoted(CollectivePurposeName(e.purpose)),
                      ",\"bucket\":", e.bucket, ",\"batch\":", e.batch, ",\"bytes\":", e.bytes,
                      ",\"dtype\":", JsonQuoted(e.dtype), ",\"state\":",
                      JsonQuoted(e.state == FlightState::kFinished ? "finished"
                                 : e.state == FlightState::kFailed ? "failed"
                                                                   : "entered"),
                      ",\"enqueued_ns\":", e.enqueued_ns, ",\"started_ns\":", e.started_ns,
                      ",\"finished_ns\":", e.finished_ns, "}");
}

std::string RecordJson(const FlightRecord& r) {
  std::vector<std::string> entries;
  for (const FlightEntry& entry : r.entries) entries.push_back(EntryJson(entry));
  return absl::StrCat("{\"rank\":", r.identity.rank, ",\"pid\":", r.pid,
                      ",\"attempt\":", r.identity.attempt, ",\"started_ns\":", r.started_ns,
                      ",\"alive_ns\":", r.alive_ns, ",\"ended\":", r.ended ? "true" : "false",
                      ",\"path\":", JsonQuoted(r.path), ",\"collectives\":[\n",
                      absl::StrJoin(entries, ",\n"), "]}");
}

std::string DiagnosisJson(const FlightDiagnosis& d) {
  std::vector<std::string> ranks;
  for (const std::string& line : d.ranks) ranks.push_back(JsonQuoted(line));
  return absl::StrCat(
      "{\"summary\":", JsonQuoted(d.summary), ",\"collective\":", JsonQuoted(d.collective),
      ",\"entered\":", RanksJson(d.entered), ",\"missing\":", RanksJson(d.missing),
      ",\"silent\":", RanksJson(d.silent), ",\"ranks\":[", absl::StrJoin(ranks, ","), "]}");
}

absl::Status WriteReplacing(const std::string& path, const std::string& text) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return absl::UnavailableError(absl::StrCat("cannot write ", partial));
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot rename ", partial, " to ", path));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FlightReport> GatherFlightReport(
    const std::string& checkpoint_root, uint64_t trial_id, uint64_t task_id, uint32_t world_size,
    const std::string& out_path, const std::map<uint32_t, std::string>& ended_outside) {
  const std::vector<std::string> paths = TaskFlightPaths(checkpoint_root, trial_id, task_id);
  if (paths.empty()) {
    return absl::NotFoundError(absl::StrCat("task ", task_id, " of trial ", trial_id,
                                            " left no flight record under ", checkpoint_root,
                                            "/.flight"));
  }
  FlightReport report;
  std::vector<FlightRecord> records;
  for (const std::string& path : paths) {
    absl::StatusOr<FlightRecord> record = ReadFlightRecord(path);
    if (record.ok()) {
      records.push_back(*std::move(record));
    } else {
      report.unreadable.emplace_back(record.status().message());
    }
  }
  report.records = records.size();
  report.diagnosis = DiagnoseFlights(records, world_size, ended_outside);
  std::vector<std::string> each;
  for (const FlightRecord& record : records) each.push_back(RecordJson(record));
  std::vector<std::string> unreadable;
  for (const std::string& why : report.unreadable) unreadable.push_back(JsonQuoted(why));
  const std::string json = absl::StrCat(
      "{\"trial_id\":", trial_id, ",\"task_id\":", task_id, ",\"world_size\":", world_size,
      ",\"diagnosis\":", DiagnosisJson(report.diagnosis), ",\"unreadable\":[",
      absl::StrJoin(unreadable, ","), "],\"records\":[\n", absl::StrJoin(each, ",\n"), "]}\n");
  if (absl::Status written = WriteReplacing(out_path, json); !written.ok()) return written;
  return report;
}

}  // namespace cohort
