#include <filesystem>

#include "absl/strings/str_cat.h"
#include "runtime/config/internal/map_reader.h"
#include "runtime/config/internal/section_readers.h"

namespace cohort::config_internal {
namespace {

// storage_path as a normalised path relative to host_path ("" for host_path itself).
void NormaliseStoragePath(MapReader& r, const std::string& host_path, std::string* storage_path) {
  namespace fs = std::filesystem;
  fs::path path = fs::path(*storage_path).lexically_normal();
  if (path.is_absolute() && !host_path.empty()) {
    path = path.lexically_relative(fs::path(host_path).lexically_normal());
  }
  if (path.is_absolute() || path.empty() || *path.begin() == "..") {
    return r.Fail(Mismatch(r.PathOf("storage_path"),
                           "a folder inside host_path (a relative path, or an absolute one under "
                           "host_path)",
                           r.Get("storage_path")));
  }
  *storage_path = path == "." ? "" : path.generic_string();
  if (!storage_path->empty() && storage_path->back() == '/') storage_path->pop_back();
  // Without host_path the checkpoints go in the run folder, where storage_path has no place: it
  // used to be dropped without a word.
  if (host_path.empty() && !storage_path->empty()) {
    return r.Fail(absl::InvalidArgumentError(absl::StrCat(
        r.PathOf("storage_path"),
        ": a folder inside host_path, which is not given; give "
        "checkpoint_storage.host_path too (the shared storage), or leave storage_path out (the "
        "checkpoints then go in the run folder); got '",
        *storage_path, "'")));
  }
}

}  // namespace

absl::Status ReadCheckpointStorage(const YAML::Node& node, std::vector<std::string>* ignored_keys,
                                   CheckpointStorageConfig* out) {
  MapReader r(node, "checkpoint_storage", ignored_keys);
  r.SupportedChoice("type", {"shared_fs"}, {"s3", "gcs", "azure", "hdfs", "directory"}, "storage",
                    "Cohort writes checkpoints to a shared file system", &out->type);
  r.AllowKeys({"type", "host_path", "storage_path", "save_trial_latest", "save_trial_best",
               "save_experiment_best", "async"},
              {"propagation", "container_path", "checkpoint_path", "tensorboard_path"});
  r.String("host_path", &out->host_path);
  r.String("storage_path", &out->storage_path);
  if (r.ok() && !out->storage_path.empty()) {
    NormaliseStoragePath(r, out->host_path, &out->storage_path);
  }
  r.Int("save_trial_latest", 0, &out->save_trial_latest);
  r.Int("save_trial_best", 0, &out->save_trial_best);
  r.Int("save_experiment_best", 0, &out->save_experiment_best);
  r.Bool("async", &out->async);
  return r.status();
}

}  // namespace cohort::config_internal
