#include "runtime/observe/flight_diagnosis.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cohort {
namespace {

double Seconds(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

std::string RankList(const std::vector<uint32_t>& ranks) {
  return absl::StrCat(ranks.size() == 1 ? "rank " : "ranks ", absl::StrJoin(ranks, ", "));
}

// Where one rank stands in one group: its collectives there, oldest first.
struct GroupView {
  std::vector<const FlightEntry*> entries;
  uint64_t finished = 0;  // the highest sequence number it finished successfully
  uint64_t entered = 0;   // the highest it entered
  const FlightEntry* Find(uint64_t seq) const {
    for (const FlightEntry* entry : entries) {
      if (entry->seq == seq) return entry;
    }
    return nullptr;
  }
};

GroupView ViewOf(const FlightRecord& record, uint8_t group) {
  GroupView view;
  for (const FlightEntry& entry : record.entries) {
    if (entry.group != group) continue;
    view.entries.push_back(&entry);
    view.entered = std::max(view.entered, entry.seq);
    if (entry.state == FlightState::kFinished) view.finished = std::max(view.finished, entry.seq);
  }
  return view;
}

bool SameCollective(const FlightEntry& a, const FlightEntry& b) {
  return a.kind == b.kind && a.bytes == b.bytes && std::string(a.dtype) == b.dtype;
}

const char* StateName(FlightState state) {
  return state == FlightState::kFinished ? "finished"
         : state == FlightState::kFailed ? "failed"
                                         : "not finished";
}

// "its last: #56 allgather (step check, batch 41), finished".
std::string LastOf(const GroupView& view) {
  if (view.entries.empty()) return "no collective of this group recorded";
  const FlightEntry& last = *view.entries.back();
  return absl::StrCat("its last: ", DescribeCollective(last), ", ", StateName(last.state));
}

// What the ranks of one group part at, if they do.
struct Parting {
  uint8_t group = kHostGroup;
  uint64_t seq = 0;
  const FlightEntry* first = nullptr;  // an entering rank's entry
  std::vector<uint32_t> entered;
  std::vector<uint32_t> missing;
  std::vector<std::string> missing_last;  // per missing rank: "rank 1's last: ..."
  std::string mismatch;                   // set when ranks called different collectives at `seq`
};

std::optional<Parting> PartingIn(uint8_t group, const std::map<uint32_t, GroupView>& views) {
  // Ranks calling different collectives under one number disagree outright, whatever finished.
  std::map<uint64_t, std::vector<std::pair<uint32_t, const FlightEntry*>>> by_seq;
  for (const auto& [rank, view] : views) {
    for (const FlightEntry* entry : view.entries) by_seq[entry->seq].push_back({rank, entry});
  }
  for (const auto& [seq, calls] : by_seq) {
    for (const auto& [rank, entry] : calls) {
      if (SameCollective(*entry, *calls.front().second)) continue;
      Parting parting;
      parting.group = group;
      parting.seq = seq;
      parting.first = calls.front().second;
      std::vector<std::string> each;
      for (const auto& [r, e] : calls) {
        parting.entered.push_back(r);
        each.push_back(absl::StrCat("rank ", r, " ", DescribeCollective(*e)));
      }
      parting.mismatch = absl::StrJoin(each, "; ");
      return parting;
    }
  }
  uint64_t lowest_finished = UINT64_MAX;
  uint64_t highest_entered = 0;
  for (const auto& [rank, view] : views) {
    lowest_finished = std::min(lowest_finished, view.finished);
    highest_entered = std::max(highest_entered, view.entered);
  }
  const uint64_t seq = lowest_finished + 1;
  if (views.empty() || seq > highest_entered) return std::nullopt;
  Parting parting;
  parting.group = group;
  parting.seq = seq;
  for (const auto& [rank, view] : views) {
    const FlightEntry* entry = view.Find(seq);
    if (view.entered >= seq) {
      parting.entered.push_back(rank);
      if (parting.first == nullptr && entry != nullptr) parting.first = entry;
    } else {
      parting.missing.push_back(rank);
      parting.missing_last.push_back(absl::StrCat("rank ", rank, ": ", LastOf(view)));
    }
  }
  if (parting.first == nullptr) return std::nullopt;  // its entries went round the ring
  return parting;
}

// What ends the summary about the silent ranks, the likely cause: a rank that ended outside Cohort
// by how and where ("rank 1 was killed by signal 9 in it"), the others as gone silent.
std::string SilentText(const std::vector<uint32_t>& silent,
                       const std::map<uint32_t, const FlightRecord*>& by_rank,
                       const std::map<uint32_t, std::string>& ended_outside,
                       const std::optional<Parting>& parting) {
  // Ranks that ended the same way in the same place are told together ("ranks 0, 1 each ended
  // with its agent node-1 (lost) in it"), in the order of their first rank.
  std::vector<std::pair<std::string, std::vector<uint32_t>>> deaths;
  std::vector<uint32_t> quiet;
  for (const uint32_t rank : silent) {
    const auto died = ended_outside.find(rank);
    if (died == ended_outside.end()) {
      quiet.push_back(rank);
      continue;
    }
    std::string death = died->second;
    const auto record = by_rank.find(rank);
    const FlightEntry* last = nullptr;
    if (record != by_rank.end() && !record->second->entries.empty()) {
      last = &record->second->entries.back();
    }
    if (last != nullptr && last->state == FlightState::kEntered) {
      const bool in_parting = parting && parting->group == last->group && parting->seq == last->seq;
      absl::StrAppend(&death, " in ", in_parting ? "it" : DescribeCollective(*last));
    }
    const auto same = std::find_if(deaths.begin(), deaths.end(),
                                   [&](const auto& told) { return told.first == death; });
    if (same != deaths.end()) {
      same->second.push_back(rank);
    } else {
      deaths.emplace_back(std::move(death), std::vector<uint32_t>{rank});
    }
  }
  std::string text;
  for (const auto& [death, ranks] : deaths) {
    absl::StrAppend(&text, text.empty() ? " " : "; ", RankList(ranks),
                    ranks.size() > 1 ? " each " : " ", death);
  }
  if (!quiet.empty()) {
    absl::StrAppend(&text, deaths.empty() ? " " : "; ", RankList(quiet),
                    quiet.size() == 1 ? " has" : " have",
                    " gone silent (no flight record, or none stamped for ",
                    absl::StrFormat("%.0f", kSilentAfterSeconds), " s: a stopped or lost process)");
  }
  if (!text.empty()) absl::StrAppend(&text, ", the likely cause.");
  return text;
}

}  // namespace

std::string DescribeCollective(const FlightEntry& entry) {
  std::string what = absl::StrCat(FlightGroupName(entry.group), " collective #", entry.seq, " (",
                                  CollectiveKindName(entry.kind));
  if (entry.kind != CollectiveKind::kBarrier) {
    absl::StrAppend(&what, " of ", entry.bytes, " bytes");
    if (std::string(entry.dtype) != "bytes") absl::StrAppend(&what, " of ", entry.dtype);
  }
  std::vector<std::string> context;
  if (entry.purpose != CollectivePurpose::kUntagged) {
    context.push_back(CollectivePurposeName(entry.purpose));
    if (entry.bucket >= 0) context.back() += absl::StrCat(" ", entry.bucket + 1);
  }
  if (entry.batch >= 0) context.push_back(absl::StrCat("batch ", entry.batch + 1));
  if (!context.empty()) absl::StrAppend(&what, ": ", absl::StrJoin(context, ", "));
  return what + ")";
}

FlightDiagnosis DiagnoseFlights(const std::vector<FlightRecord>& records, uint32_t world_size,
                                const std::map<uint32_t, std::string>& ended_outside) {
  FlightDiagnosis found;
  std::map<uint32_t, const FlightRecord*> by_rank;
  int64_t newest = 0;
  for (const FlightRecord& record : records) {
    const FlightRecord*& kept = by_rank[record.identity.rank];
    if (kept == nullptr || record.started_ns > kept->started_ns) kept = &record;
    newest = std::max(newest, record.alive_ns);
  }
  for (uint32_t rank = 0; rank < world_size; ++rank) {
    const auto it = by_rank.find(rank);
    if (it == by_rank.end()) {
      found.silent.push_back(rank);
      found.ranks.push_back(absl::StrCat("rank ", rank, ": left no flight record"));
      continue;
    }
    const FlightRecord& record = *it->second;
    const double behind = Seconds(newest - record.alive_ns);
    const auto died = ended_outside.find(rank);
    const bool silent =
        died != ended_outside.end() || (!record.ended && behind >= kSilentAfterSeconds);
    if (silent) found.silent.push_back(rank);
    std::string line = absl::StrCat("rank ", rank, " (pid ", record.pid,
                                    "): ", record.entries.size(), " collectives recorded");
    for (uint8_t group = 0; group < kFlightGroups; ++group) {
      const GroupView view = ViewOf(record, group);
      if (!view.entries.empty()) absl::StrAppend(&line, "; ", LastOf(view));
    }
    if (died != ended_outside.end()) {
      absl::StrAppend(&line, "; its process ", died->second);
    } else if (record.ended) {
      absl::StrAppend(&line, "; it ended");
    } else if (silent) {
      absl::StrAppend(&line, absl::StrFormat("; its record was last stamped %.1f s before the "
                                             "newest (its process is stopped or gone)",
                                             behind));
    }
    found.ranks.push_back(std::move(line));
  }

  std::optional<Parting> parting;
  for (uint8_t group = 0; group < kFlightGroups; ++group) {
    std::map<uint32_t, GroupView> views;
    for (const auto& [rank, record] : by_rank) {
      GroupView view = ViewOf(*record, group);
      if (!view.entries.empty()) views.emplace(rank, std::move(view));
    }
    // A rank with collectives in another group but none here has not reached this group.
    if (!views.empty()) {
      for (const auto& [rank, record] : by_rank) views.try_emplace(rank);
    }
    std::optional<Parting> here = PartingIn(group, views);
    if (!here) continue;
    // Of two groups' partings the older one is the cause: report the one entered first.
    if (!parting || !here->mismatch.empty() ||
        (parting->mismatch.empty() && here->first->started_ns < parting->first->started_ns)) {
      parting = std::move(here);
    }
  }

  const std::string silent_text = SilentText(found.silent, by_rank, ended_outside, parting);
  if (!parting) {
    found.summary = absl::StrCat(
        "every rank finished every collective it entered; the ranks agree on all of them.",
        silent_text);
    return found;
  }
  found.collective = DescribeCollective(*parting->first);
  found.entered = parting->entered;
  found.missing = parting->missing;
  if (!parting->mismatch.empty()) {
    found.summary = absl::StrCat(FlightGroupName(parting->group), " collective #", parting->seq,
                                 " is where the ranks disagree: ", parting->mismatch,
                                 ". They called different collectives there (a rank skipped or "
                                 "added one).",
                                 silent_text);
    return found;
  }
  const double waited = std::max(0.0, Seconds(newest - parting->first->started_ns));
  std::string summary =
      absl::StrCat(found.collective, " is where the ranks part: ", RankList(found.entered),
                   absl::StrFormat(" entered it (%.1f s before the newest record)", waited));
  if (found.missing.empty()) {
    absl::StrAppend(&summary, "; every rank entered it and not all finished it");
  } else {
    absl::StrAppend(&summary, "; ", RankList(found.missing),
                    found.missing.size() == 1 ? " is" : " are", " missing from it (",
                    absl::StrJoin(parting->missing_last, "; "), ")");
  }
  found.summary = absl::StrCat(summary, ".", silent_text);
  return found;
}

}  // namespace cohort
