// CURVE key pairs and their files: what `cohort keygen` writes and what the orchestrator, agents
// and clients load to authenticate each other on the control channels.
//
// Keys are Z85 text (40 characters for 32 bytes), as ZeroMQ takes them. Files use ZeroMQ's
// certificate format (ZPL, as czmq's zcert writes it), so either tool can read the other's:
//
//   # Cohort CURVE secret key. Keep this file private (mode 0600).
//   metadata
//       name = "agent-7"
//   curve
//       public-key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
//       secret-key = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
//
// The public file has the same shape without the secret-key line. A secret file is created with
// mode 0600 and is refused when it is readable or writable by anyone but its owner.
//
//   absl::StatusOr<CurveKeyPair> keys = GenerateCurveKeyPair();
//   WriteSecretKeyFile("/etc/cohort/agent-7.key", "agent-7", *keys).IgnoreError();
//   absl::StatusOr<CurveKeyPair> loaded = ReadSecretKeyFile("/etc/cohort/agent-7.key");
//
// Thread-safety: every function may be called from any thread.
#ifndef COHORT_RUNTIME_SECURITY_CURVE_KEYS_H_
#define COHORT_RUNTIME_SECURITY_CURVE_KEYS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cohort {

// Length of a Z85-encoded CURVE key.
inline constexpr size_t kCurveKeyLength = 40;

struct CurveKeyPair {
  std::string public_key;  // Z85, kCurveKeyLength characters
  std::string secret_key;  // Z85, kCurveKeyLength characters
};

// A fresh key pair from ZeroMQ (zmq_curve_keypair). UNIMPLEMENTED when libzmq was built without
// CURVE.
absl::StatusOr<CurveKeyPair> GenerateCurveKeyPair();

// Whether `key` is a well-formed Z85 CURVE key (40 characters of the Z85 alphabet).
bool IsCurveKey(absl::string_view key);

// The public key that belongs to `secret_key`. INVALID_ARGUMENT when it is not a CURVE key.
absl::StatusOr<std::string> CurvePublicKeyOf(absl::string_view secret_key);

// Whether `name` may name a key: 1 to 64 of [A-Za-z0-9._-], not starting with '.' or '-'.
// Names become file names and the User-Id of authenticated peers.
bool IsKeyName(absl::string_view name);

// Creates `path` with mode 0600 holding both keys. ALREADY_EXISTS if `path` exists (keys are
// never overwritten), INVALID_ARGUMENT for a malformed key or name, UNAVAILABLE for I/O errors.
absl::Status WriteSecretKeyFile(const std::string& path, absl::string_view name,
                                const CurveKeyPair& keys);

// Creates `path` with mode 0644 holding the public key; errors as WriteSecretKeyFile.
absl::Status WritePublicKeyFile(const std::string& path, absl::string_view name,
                                absl::string_view public_key);

// Both keys from a secret key file. INVALID_ARGUMENT when it holds no secret key (a public key
// file is named as one); PERMISSION_DENIED when the file is accessible to its group or to others
// (the message says how to fix it); INVALID_ARGUMENT when a key is malformed, or the public key
// does not belong to the secret key; NOT_FOUND/UNAVAILABLE when it cannot be read.
absl::StatusOr<CurveKeyPair> ReadSecretKeyFile(const std::string& path);

// The public key from a public (or secret) key file; errors as ReadSecretKeyFile, without the
// permission check.
absl::StatusOr<std::string> ReadPublicKeyFile(const std::string& path);

// The public key of a peer from its public key file: as ReadPublicKeyFile, and INVALID_ARGUMENT
// for a file that holds a secret key (a peer's secret stays with its owner: its .pub is asked).
absl::StatusOr<std::string> ReadPeerPublicKeyFile(const std::string& path);

// The name in a key file's metadata (`name = "agent-7"`, as `cohort keygen` writes it), or ""
// when it has none; errors as ReadPublicKeyFile.
absl::StatusOr<std::string> ReadKeyFileName(const std::string& path);

}  // namespace cohort

#endif  // COHORT_RUNTIME_SECURITY_CURVE_KEYS_H_
