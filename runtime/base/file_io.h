// ReadWholeFile and WriteWholeFile: the bytes of a small file (a config, a record, a part of a
// checkpoint) in one call.
//
//   absl::StatusOr<std::string> yaml = ReadWholeFile(run_folder + "/config.yaml");
//   absl::Status written = WriteWholeFile(task_folder + "/config.yaml", yaml);
//
// Thread-safety: safe to call from any thread.
#ifndef COHORT_RUNTIME_BASE_FILE_IO_H_
#define COHORT_RUNTIME_BASE_FILE_IO_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

// The file's bytes. An error says the call and the path ("open PATH: No such file or directory")
// with the code of its errno (NOT_FOUND for a missing file); FAILED_PRECONDITION for a path that
// is not a regular file (a folder, a device).
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// Creates or truncates the file and writes `contents`; not atomic (a reader may see part of it:
// see WriteFileAtomically in record/run_folder.h for files others read). An error names the path.
absl::Status WriteWholeFile(const std::string& path, absl::string_view contents);

}  // namespace cohort

#endif  // COHORT_RUNTIME_BASE_FILE_IO_H_
