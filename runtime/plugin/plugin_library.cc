#include "runtime/plugin/plugin_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/plugin/elf_machine.h"
#include "runtime/plugin/host_api.h"

namespace cohort {
namespace {

const cohort_abi_version kHostVersion{COHORT_ABI_VERSION_MAJOR, COHORT_ABI_VERSION_MINOR};

// Size of the prefix every major keeps: struct_size and abi_version.
constexpr size_t kVersionPrefixSize = COHORT_STRUCT_SIZE(cohort_plugin_api, abi_version);
// Size of the table in ABI 1.0, the smallest a 1.x plugin may report.
constexpr size_t kTableSizeV1_0 = COHORT_STRUCT_SIZE(cohort_plugin_api, load_state);

absl::Status Refuse(absl::StatusCode code, const std::string& path, absl::string_view why) {
  return absl::Status(code, absl::StrCat("plugin '", path, "': ", why));
}

absl::Status CheckTable(const std::string& path, const cohort_plugin_api* api) {
  if (api == nullptr) {
    return Refuse(absl::StatusCode::kFailedPrecondition, path, "cohort_plugin_entry returned NULL");
  }
  if (api->struct_size < kVersionPrefixSize) {
    return Refuse(absl::StatusCode::kFailedPrecondition, path,
                  absl::StrCat("plugin table struct_size is ", api->struct_size,
                               " bytes, too small to hold even its ABI version (",
                               kVersionPrefixSize, " bytes)"));
  }
  if (api->abi_version.major != kHostVersion.major) {
    return Refuse(
        absl::StatusCode::kFailedPrecondition, path,
        absl::StrCat("built for Cohort ABI ", VersionString(api->abi_version),
                     ", but this host implements ABI ", VersionString(kHostVersion),
                     "; the major versions must match: rebuild the plugin against the Cohort ",
                     kHostVersion.major, ".x SDK"));
  }
  if (api->struct_size < kTableSizeV1_0) {
    return Refuse(
        absl::StatusCode::kFailedPrecondition, path,
        absl::StrCat("plugin table struct_size is ", api->struct_size, " bytes, smaller than the ",
                     kTableSizeV1_0, " bytes of ABI ", kHostVersion.major,
                     ".0's cohort_plugin_api (was it filled with COHORT_STRUCT_SIZE?)"));
  }
  // A table no larger than this host's is all a plugin of its minor or older can fill (fields
  // beyond it belong to later minors): more is a struct_size not set by COHORT_STRUCT_SIZE, and
  // the fields it claims are not there.
  if (api->abi_version.minor <= kHostVersion.minor &&
      api->struct_size > sizeof(cohort_plugin_api)) {
    return Refuse(
        absl::StatusCode::kFailedPrecondition, path,
        absl::StrCat("plugin table struct_size is ", api->struct_size, " bytes, but ABI ",
                     VersionString(api->abi_version), "'s cohort_plugin_api has ",
                     sizeof(cohort_plugin_api), " (was it filled with COHORT_STRUCT_SIZE?)"));
  }
  if (api->host_minor_required > kHostVersion.minor) {
    return Refuse(
        absl::StatusCode::kFailedPrecondition, path,
        absl::StrCat("needs a host of ABI ", kHostVersion.major, ".", api->host_minor_required,
                     " or later, but this host implements ABI ", VersionString(kHostVersion)));
  }
  if (api->name == nullptr || api->name_len == 0) {
    return Refuse(absl::StatusCode::kFailedPrecondition, path, "the plugin table has no name");
  }
  std::vector<std::string> missing;
  if (api->model_create == nullptr) missing.push_back("model_create");
  if (api->model_destroy == nullptr) missing.push_back("model_destroy");
  if (api->dataset_size == nullptr) missing.push_back("dataset_size");
  if (api->train_batch == nullptr) missing.push_back("train_batch");
  if (api->evaluate_batch == nullptr) missing.push_back("evaluate_batch");
  if (!missing.empty()) {
    return Refuse(
        absl::StatusCode::kFailedPrecondition, path,
        absl::StrCat("required function", missing.size() > 1 ? "s " : " ",
                     absl::StrJoin(missing, ", "), " missing from the plugin table (NULL)"));
  }
  if ((api->save_state == nullptr) != (api->load_state == nullptr)) {
    return Refuse(
        absl::StatusCode::kFailedPrecondition, path,
        absl::StrCat(api->save_state == nullptr ? "load_state" : "save_state", " is set without ",
                     api->save_state == nullptr ? "save_state" : "load_state",
                     "; a plugin provides both or neither"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string VersionString(cohort_abi_version version) {
  return absl::StrCat(version.major, ".", version.minor);
}

absl::StatusOr<std::shared_ptr<const PluginLibrary>> PluginLibrary::Open(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return Refuse(absl::StatusCode::kNotFound, path, "file not found");
  }
  if (!S_ISREG(info.st_mode)) {
    return Refuse(absl::StatusCode::kInvalidArgument, path, "not a regular file");
  }
  // A bare file name would make dlopen search the library path instead of opening this file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  ::dlerror();
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    if (std::optional<std::string> other = ElfMachineMismatch(path)) {
      return Refuse(absl::StatusCode::kInvalidArgument, path,
                    absl::StrCat("not a loadable shared library: ", *other));
    }
    return Refuse(absl::StatusCode::kInvalidArgument, path,
                  absl::StrCat("not a loadable shared library (",
                               why == nullptr ? "dlopen failed" : why, ")"));
  }
  std::shared_ptr<PluginLibrary> library(new PluginLibrary(path, handle));

  ::dlerror();
  void* entry = ::dlsym(handle, COHORT_PLUGIN_ENTRY_SYMBOL);
  if (entry == nullptr) {
    return Refuse(
        absl::StatusCode::kFailedPrecondition, path,
        "entry symbol '" COHORT_PLUGIN_ENTRY_SYMBOL
        "' not found; define it with COHORT_PLUGIN(...) or export it with COHORT_PLUGIN_EXPORT");
  }
  auto entry_fn = reinterpret_cast<cohort_plugin_entry_fn>(entry);
  const cohort_plugin_api* api = entry_fn(HostApi());
  if (absl::Status s = CheckTable(path, api); !s.ok()) return s;
  library->api_ = api;
  library->name_.assign(api->name, api->name_len);
  return std::shared_ptr<const PluginLibrary>(std::move(library));
}

PluginLibrary::~PluginLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

}  // namespace cohort
