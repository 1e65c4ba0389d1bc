// PluginLibrary: a model plugin loaded from a shared library and checked against this host's ABI.
//
//   absl::StatusOr<std::shared_ptr<const PluginLibrary>> plugin = PluginLibrary::Open(path);
//   if (!plugin.ok()) { /* the message names the file and the cause */ }
//
// Open refuses, with a message naming the file: a missing file; a file that is not a loadable
// shared library; a missing entry symbol (cohort_plugin_entry); an entry that returns NULL; a
// plugin table too small to hold its version; an ABI major other than this host's (both versions
// named); a table smaller than this major's first release; a plugin that needs a newer host minor
// (both named); a missing name or required function (each named); save_state without load_state
// or the reverse.
//
// A plugin runs in the caller's process: a crash inside it crashes the caller. The runtime
// therefore loads plugins only in worker processes, never in the agent or the CLI's main process.
//
// Thread-safety: immutable after Open; the library is unloaded when the last reference goes.
#ifndef COHORT_RUNTIME_PLUGIN_PLUGIN_LIBRARY_H_
#define COHORT_RUNTIME_PLUGIN_PLUGIN_LIBRARY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cohort/plugin.h"

namespace cohort {

class PluginLibrary {
 public:
  static absl::StatusOr<std::shared_ptr<const PluginLibrary>> Open(const std::string& path);
  ~PluginLibrary();
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  const cohort_plugin_api& api() const { return *api_; }
  cohort_abi_version abi_version() const { return api_->abi_version; }
  bool has_optimizer() const { return api_->optimizer_step != nullptr; }
  bool has_state() const { return api_->save_state != nullptr; }

 private:
  PluginLibrary(std::string path, void* handle) : path_(std::move(path)), handle_(handle) {}

  std::string path_;
  std::string name_;
  void* handle_;
  const cohort_plugin_api* api_ = nullptr;
};

// "1.0"
std::string VersionString(cohort_abi_version version);

}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_PLUGIN_LIBRARY_H_
