#include "runtime/trial/rank_sync.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/arena/block_staging.h"
#include "runtime/arena/device_memory.h"
#include "runtime/base/fnv1a.h"
#include "runtime/base/permanent_failure.h"
#include "runtime/collective/recorded_collective.h"
#include "runtime/trial/trial_state.h"

namespace cohort {
namespace {

// Every rank's `value`, in rank order.
template <class T>
absl::StatusOr<std::vector<T>> Gather(CollectiveBackend& backend, T value) {
  std::vector<T> all(backend.size());
  if (absl::Status status = backend.Allgather(&value, sizeof(T), all.data()); !status.ok()) {
    return status;
  }
  return all;
}

// A rank's metric names, joined, in a fixed size (cut where they run over) for a Gather.
struct MetricNamesText {
  std::array<char, 240> bytes{};

  static MetricNamesText Of(const std::vector<std::string>& names) {
    MetricNamesText text;
    const std::string joined = absl::StrJoin(names, ", ");
    std::memcpy(text.bytes.data(), joined.data(), std::min(joined.size(), text.bytes.size() - 1));
    return text;
  }
  std::string text() const {
    return std::string(bytes.data(), strnlen(bytes.data(), bytes.size()));
  }
};

// The checkpoint's layout text plus every tensor's shape (which PowerSGD relies on).
std::string LayoutWithShapes(const TensorArena& arena, const TensorArena* state) {
  std::string text = TensorLayout(arena, state);
  for (size_t t = 0; t < arena.tensor_count(); ++t) {
    absl::StrAppend(&text, "\nshape ", t, " [", absl::StrJoin(arena.spec(t).shape, ","), "]");
  }
  return text;
}

}  // namespace

absl::Status CheckSameLayout(CollectiveBackend& backend, const TensorArena& arena,
                             const TensorArena* state) {
  CollectiveTagScope tag({.purpose = CollectivePurpose::kLayout});
  absl::StatusOr<std::vector<uint64_t>> layouts =
      Gather(backend, Fnv1a64(LayoutWithShapes(arena, state)));
  if (!layouts.ok()) return layouts.status();
  std::vector<uint32_t> differ;
  for (uint32_t rank = 1; rank < layouts->size(); ++rank) {
    if ((*layouts)[rank] != (*layouts)[0]) differ.push_back(rank);
  }
  if (differ.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("the model's tensors differ between ranks: rank", differ.size() > 1 ? "s " : " ",
                   absl::StrJoin(differ, ", "),
                   " registered other tensors than rank 0 (names, dtypes, sizes "
                   "or devices); every rank must build the same model"));
}

absl::Status BroadcastParameters(CollectiveBackend& backend, TensorArena& arena) {
  CollectiveTagScope tag({.purpose = CollectivePurpose::kParameters});
  std::vector<char> staged;
  for (const ArenaBlock& block : arena.blocks()) {
    if (OnHost(block)) {
      if (absl::Status status = backend.Broadcast(block.data, BlockBytes(block), 0); !status.ok()) {
        return status;
      }
      continue;
    }
    // The backend moves host memory: a device block travels through a host copy.
    staged.resize(BlockBytes(block));
    if (absl::Status s = CopyBlockToHost(block, BlockPart::kParameters, staged.data()); !s.ok()) {
      return s;
    }
    if (absl::Status s = backend.Broadcast(staged.data(), staged.size(), 0); !s.ok()) return s;
    if (absl::Status s = CopyBlockFromHost(block, BlockPart::kParameters, staged.data()); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status MergeMetricsAcrossRanks(CollectiveBackend& backend, MetricAccumulator& metrics) {
  CollectiveTagScope tag({.purpose = CollectivePurpose::kMetrics});
  const std::vector<double> own = metrics.Packed();
  const std::vector<std::string> own_names = metrics.Names();
  const uint64_t own_names_hash = Fnv1a64(absl::StrJoin(own_names, "\n"));
  // Every rank's count of packed numbers and the hash of its metrics' names.
  absl::StatusOr<std::vector<std::array<uint64_t, 2>>> shapes =
      Gather(backend, std::array<uint64_t, 2>{own.size(), own_names_hash});
  if (!shapes.ok()) return shapes.status();
  // Every rank sees the same shapes, so every rank decides alike: a count that differs from
  // rank 0's fails them all at once; else names that differ make them all gather the names the
  // message shows. Either is the same on every attempt: not restarted.
  const std::vector<std::array<uint64_t, 2>>& all_shapes = *shapes;
  for (uint32_t rank = 0; rank < all_shapes.size(); ++rank) {
    if (all_shapes[rank][0] == all_shapes[0][0]) continue;
    const uint32_t other = rank == backend.rank() ? 0 : rank;
    const bool none = all_shapes[other][0] == 0 || own.empty();
    return PermanentFailure(absl::FailedPreconditionError(absl::StrCat(
        "rank ", other, " reported ", all_shapes[other][0] / 3, " metrics and rank ",
        backend.rank(), " ", own.size() / 3, "; every rank must report the same metrics",
        none ? " (a batch without records, as a rank's empty share of a validation, reports them "
               "with record count 0)"
             : "")));
  }
  const auto differs = [&](const std::array<uint64_t, 2>& shape) {
    return shape[1] != all_shapes[0][1];
  };
  if (std::any_of(all_shapes.begin(), all_shapes.end(), differs)) {
    absl::StatusOr<std::vector<MetricNamesText>> names =
        Gather(backend, MetricNamesText::Of(own_names));
    if (!names.ok()) return names.status();
    uint32_t other = 0;
    while (other < all_shapes.size() && all_shapes[other][1] == own_names_hash) ++other;
    return PermanentFailure(absl::FailedPreconditionError(
        absl::StrCat("rank ", other, " reported metrics named (", (*names)[other].text(),
                     ") but rank ", backend.rank(), " (", absl::StrJoin(own_names, ", "),
                     "); every rank must report the same metrics")));
  }
  std::vector<double> all(own.size() * backend.size());
  if (!own.empty()) {
    if (absl::Status status =
            backend.Allgather(own.data(), own.size() * sizeof(double), all.data());
        !status.ok()) {
      return status;
    }
  }
  // Rank 0's values, then every other rank's in rank order: the same sums, to the bit, everywhere.
  for (uint32_t rank = 0; rank < backend.size(); ++rank) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(rank * own.size());
    const std::vector<double> theirs(first, first + static_cast<std::ptrdiff_t>(own.size()));
    if (absl::Status status = metrics.MergePacked(theirs, /*replace=*/rank == 0); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> AnyRank(CollectiveBackend& backend, bool flag) {
  CollectiveTagScope tag({.purpose = CollectivePurpose::kDecision});
  double value = flag ? 1 : 0;
  if (absl::Status status = backend.AllreduceSum(&value, 1, COHORT_DTYPE_FLOAT64); !status.ok()) {
    return status;
  }
  return value > 0;
}

}  // namespace cohort
