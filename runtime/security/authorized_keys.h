// AuthorizedKeys: the CURVE public keys a server accepts, each with the name its messages carry
// as User-Id.
//
// Loaded from either
//   - a file, one key per line: `<z85-public-key> <name>`; blank lines and lines starting with
//     '#' are skipped:
//         # agents of the west rack
//         rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7 agent-7
//   - or a folder: every `NAME.pub` file in it (as `cohort keygen` writes them) is one key named
//     NAME; other files are ignored.
// Keys and names are unique: a second line with the same key or name is an error, so one name
// always means one peer.
//
//   absl::StatusOr<AuthorizedKeys> keys = AuthorizedKeys::Load("/etc/cohort/authorized_keys");
//   if (const std::string* name = keys->NameOf(client_key)) Accept(*name);
//
// Thread-safety: const methods may be called concurrently; Add needs exclusive use.
#ifndef COHORT_RUNTIME_SECURITY_AUTHORIZED_KEYS_H_
#define COHORT_RUNTIME_SECURITY_AUTHORIZED_KEYS_H_

#include <cstddef>
#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

class AuthorizedKeys {
 public:
  // Reads a keys file or a folder of NAME.pub files (see above). Errors name the file and line.
  static absl::StatusOr<AuthorizedKeys> Load(const std::string& path);

  // Accepts `public_key` (Z85) as `name` (IsKeyName). INVALID_ARGUMENT for a malformed key or
  // name, ALREADY_EXISTS when the key or the name is already present.
  absl::Status Add(absl::string_view public_key, absl::string_view name);

  // The name of `public_key` (Z85), or nullptr when it is not authorized. The pointer is valid
  // until the next Add or the end of this object.
  const std::string* NameOf(absl::string_view public_key) const;

  size_t size() const { return names_by_key_.size(); }
  bool empty() const { return names_by_key_.empty(); }

 private:
  std::map<std::string, std::string> names_by_key_;
  std::set<std::string> names_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_SECURITY_AUTHORIZED_KEYS_H_
