#include "runtime/security/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace cohort {
namespace {

constexpr char kZ85Alphabet[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

absl::Status ErrnoStatus(absl::string_view action, const std::string& path, int error) {
  std::string message = absl::StrCat(action, " ", path, ": ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EEXIST)
    return absl::AlreadyExistsError(absl::StrCat(message, " (keys are never overwritten)"));
  return absl::UnavailableError(message);
}

std::string KeyFileText(absl::string_view name, absl::string_view public_key,
                        absl::string_view secret_key) {
  std::string text =
      secret_key.empty()
          ? "# Cohort CURVE public key. Give it to the peers that must accept this one.\n"
          : "# Cohort CURVE secret key. Keep this file private (mode 0600).\n";
  absl::StrAppend(&text, "metadata\n    name = \"", name, "\"\ncurve\n    public-key = \"",
                  public_key, "\"\n");
  if (!secret_key.empty()) absl::StrAppend(&text, "    secret-key = \"", secret_key, "\"\n");
  return text;
}

absl::Status CreateFile(const std::string& path, mode_t mode, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoStatus("cannot create", path, errno);
  // The umask may have narrowed `mode`; it never widens it, so this only restores the intent.
  bool ok = ::fchmod(fd, mode) == 0;
  size_t written = 0;
  while (ok && written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) written += static_cast<size_t>(n);
  }
  const int error = errno;
  if (::close(fd) != 0) ok = false;
  if (!ok) {
    ::unlink(path.c_str());
    return ErrnoStatus("cannot write", path, error);
  }
  return absl::OkStatus();
}

// The file's text; when `private_only`, refuses a file that its group or others may access.
absl::StatusOr<std::string> ReadKeyFile(const std::string& path, bool private_only) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open key file", path, errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat("key file ", path, " is not a regular file"));
  }
  if (private_only && (info.st_mode & 077) != 0) {
    ::close(fd);
    return absl::PermissionDeniedError(absl::StrFormat(
        "secret key file %s has mode %04o: other users may read it; run `chmod 600 %s` (and "
        "consider the key compromised if they did)",
        path, info.st_mode & 07777, path));
  }
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return ErrnoStatus("cannot read key file", path, error);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

// The `key = "value"` entries of a ZPL file, at any depth; comments and section names are skipped.
std::map<std::string, std::string> ParseEntries(absl::string_view text) {
  std::map<std::string, std::string> entries;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#' || !absl::StrContains(line, '=')) continue;
    std::pair<absl::string_view, absl::string_view> entry =
        absl::StrSplit(line, absl::MaxSplits('=', 1));
    absl::string_view value = absl::StripAsciiWhitespace(entry.second);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    entries[std::string(absl::StripAsciiWhitespace(entry.first))] = std::string(value);
  }
  return entries;
}

// A public key file's text: a public key and no secret one.
bool HoldsPublicKeyOnly(absl::string_view text) {
  const std::map<std::string, std::string> entries = ParseEntries(text);
  return entries.count("secret-key") == 0 && entries.count("public-key") != 0;
}

absl::StatusOr<std::string> KeyEntry(const std::map<std::string, std::string>& entries,
                                     const std::string& path, const std::string& field) {
  auto it = entries.find(field);
  if (it == entries.end()) {
    return absl::InvalidArgumentError(absl::StrCat("key file ", path, " has no ", field, " line"));
  }
  if (!IsCurveKey(it->second)) {
    return absl::InvalidArgumentError(
        absl::StrCat("key file ", path, ": ", field, " is not a CURVE key (40 characters of Z85)"));
  }
  return it->second;
}

}  // namespace

absl::StatusOr<CurveKeyPair> GenerateCurveKeyPair() {
  char public_key[kCurveKeyLength + 1];
  char secret_key[kCurveKeyLength + 1];
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    return absl::UnimplementedError(
        absl::StrCat("cannot generate a CURVE key pair: ", zmq_strerror(zmq_errno()),
                     " (is libzmq built with CURVE support?)"));
  }
  return CurveKeyPair{public_key, secret_key};
}

bool IsCurveKey(absl::string_view key) {
  if (key.size() != kCurveKeyLength) return false;
  for (char c : key) {
    if (c == '\0' || std::strchr(kZ85Alphabet, c) == nullptr) return false;
  }
  // Each 5 characters encode a 32-bit word: reject groups past 2^32 - 1, which ZeroMQ refuses.
  uint8_t decoded[32];
  const std::string text(key);
  return zmq_z85_decode(decoded, text.c_str()) != nullptr;
}

absl::StatusOr<std::string> CurvePublicKeyOf(absl::string_view secret_key) {
  if (!IsCurveKey(secret_key))
    return absl::InvalidArgumentError("not a CURVE secret key (40 characters of Z85)");
  char public_key[kCurveKeyLength + 1];
  const std::string secret(secret_key);
  if (zmq_curve_public(public_key, secret.c_str()) != 0) {
    return absl::UnimplementedError(
        absl::StrCat("cannot derive a CURVE public key: ", zmq_strerror(zmq_errno())));
  }
  return std::string(public_key);
}

bool IsKeyName(absl::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] == '.' || name[0] == '-') return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      return false;
  }
  return true;
}

absl::Status WriteSecretKeyFile(const std::string& path, absl::string_view name,
                                const CurveKeyPair& keys) {
  if (!IsKeyName(name))
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a key name"));
  absl::StatusOr<std::string> derived = CurvePublicKeyOf(keys.secret_key);
  if (!derived.ok()) return derived.status();
  if (*derived != keys.public_key) {
    return absl::InvalidArgumentError("the public key does not belong to the secret key");
  }
  return CreateFile(path, 0600, KeyFileText(name, keys.public_key, keys.secret_key));
}

absl::Status WritePublicKeyFile(const std::string& path, absl::string_view name,
                                absl::string_view public_key) {
  if (!IsKeyName(name))
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a key name"));
  if (!IsCurveKey(public_key))
    return absl::InvalidArgumentError("not a CURVE public key (40 characters of Z85)");
  return CreateFile(path, 0644, KeyFileText(name, public_key, ""));
}

absl::StatusOr<CurveKeyPair> ReadSecretKeyFile(const std::string& path) {
  // A public key file named where a secret one belongs: said so, not that its mode is unsafe.
  if (absl::StatusOr<std::string> any = ReadKeyFile(path, /*private_only=*/false);
      any.ok() && HoldsPublicKeyOnly(*any)) {
    return absl::InvalidArgumentError(
        absl::StrCat("key file ", path,
                     " has no secret-key line: it holds a public key only; give this side's "
                     "secret key file (the .key `cohort keygen` wrote beside the .pub)"));
  }
  absl::StatusOr<std::string> text = ReadKeyFile(path, /*private_only=*/true);
  if (!text.ok()) return text.status();
  const std::map<std::string, std::string> entries = ParseEntries(*text);
  absl::StatusOr<std::string> secret_key = KeyEntry(entries, path, "secret-key");
  if (!secret_key.ok()) return secret_key.status();
  absl::StatusOr<std::string> public_key = CurvePublicKeyOf(*secret_key);
  if (!public_key.ok()) return public_key.status();
  if (entries.count("public-key") != 0 && entries.at("public-key") != *public_key) {
    return absl::InvalidArgumentError(
        absl::StrCat("key file ", path, ": its public-key does not belong to its secret-key"));
  }
  return CurveKeyPair{*std::move(public_key), *std::move(secret_key)};
}

absl::StatusOr<std::string> ReadPublicKeyFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadKeyFile(path, /*private_only=*/false);
  if (!text.ok()) return text.status();
  return KeyEntry(ParseEntries(*text), path, "public-key");
}

absl::StatusOr<std::string> ReadPeerPublicKeyFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadKeyFile(path, /*private_only=*/false);
  if (!text.ok()) return text.status();
  const std::map<std::string, std::string> entries = ParseEntries(*text);
  if (entries.count("secret-key") != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("key file ", path,
                     " holds a secret key: give the peer's public key file (its .pub), and "
                     "keep the secret one with its owner only"));
  }
  return KeyEntry(entries, path, "public-key");
}

absl::StatusOr<std::string> ReadKeyFileName(const std::string& path) {
  absl::StatusOr<std::string> text = ReadKeyFile(path, /*private_only=*/false);
  if (!text.ok()) return text.status();
  const std::map<std::string, std::string> entries = ParseEntries(*text);
  const auto name = entries.find("name");
  return name == entries.end() ? std::string() : name->second;
}

}  // namespace cohort
