#include "runtime/security/authorized_keys.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/security/curve_keys.h"

namespace cohort {
namespace {

absl::Status WithContext(const absl::Status& status, absl::string_view where) {
  return absl::Status(status.code(), absl::StrCat(where, ": ", status.message()));
}

absl::Status AddLines(AuthorizedKeys& keys, const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read authorized keys file ", path));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    std::vector<absl::string_view> words =
        absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    absl::Status added = words.size() == 2
                             ? keys.Add(words[0], words[1])
                             : absl::InvalidArgumentError("expected `<z85-public-key> <name>`");
    if (!added.ok()) return WithContext(added, absl::StrCat(path, ":", number));
  }
  return absl::OkStatus();
}

absl::Status AddFolder(AuthorizedKeys& keys, const std::string& path) {
  std::error_code error;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
    if (entry.path().extension() == ".pub") files.push_back(entry.path());
  }
  if (error)
    return absl::UnavailableError(absl::StrCat("cannot list ", path, ": ", error.message()));
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path& file : files) {
    absl::StatusOr<std::string> key = ReadPublicKeyFile(file.string());
    if (!key.ok()) return key.status();
    if (absl::Status added = keys.Add(*key, file.stem().string()); !added.ok()) {
      return WithContext(added, file.string());
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AuthorizedKeys> AuthorizedKeys::Load(const std::string& path) {
  AuthorizedKeys keys;
  std::error_code error;
  const bool folder = std::filesystem::is_directory(path, error);
  absl::Status loaded = folder ? AddFolder(keys, path) : AddLines(keys, path);
  if (!loaded.ok()) return loaded;
  return keys;
}

absl::Status AuthorizedKeys::Add(absl::string_view public_key, absl::string_view name) {
  if (!IsCurveKey(public_key)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", public_key, "' is not a CURVE public key (40 characters of Z85)"));
  }
  if (!IsKeyName(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", name, "' is not a key name (1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -)"));
  }
  if (const std::string* existing = NameOf(public_key)) {
    return absl::AlreadyExistsError(
        absl::StrCat("the key of '", name, "' is already authorized as '", *existing, "'"));
  }
  if (!names_.insert(std::string(name)).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("the name '", name, "' is already given to another key"));
  }
  names_by_key_.emplace(std::string(public_key), std::string(name));
  return absl::OkStatus();
}

const std::string* AuthorizedKeys::NameOf(absl::string_view public_key) const {
  auto it = names_by_key_.find(std::string(public_key));
  return it == names_by_key_.end() ? nullptr : &it->second;
}

}  // namespace cohort
