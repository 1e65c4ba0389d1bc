// Sweeps of bytes no honest peer would send, for the tests of every wire codec: random buffers,
// random bodies behind a valid buffer's root offset and file identifier, every truncation of a
// valid buffer, and every bit flip and smashed byte of one. A sweep makes the bytes and hands each
// to the test's decoder or to its own check, so each codec keeps what it asserts of a decoded
// value. The sequences are fixed (seeded), so a failure repeats.
//
//   ExpectRandomBuffersRefused(DecodeControlMessage);
//   for (const std::string& valid : EveryMessageEncoded()) {
//     ExpectEveryTruncationRefusedOrExact(valid, DecodeControlMessage);
//     ForEachFlippedBitAndSmashedByte(valid, [](const std::string& bytes) { ... });
//   }
//
// A decoder takes an absl::string_view and returns an absl::StatusOr of a value with ==.
//
// Thread-safety: call from the test's thread.
#ifndef COHORT_TEST_COMMON_HOSTILE_BYTES_H_
#define COHORT_TEST_COMMON_HOSTILE_BYTES_H_

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace cohort {

// `size` bytes drawn from `rng`.
inline std::string RandomBytes(std::mt19937_64& rng, size_t size) {
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
  return bytes;
}

// 4000 random buffers of 0 to 599 bytes, and the empty buffer, are all refused.
template <typename Decode>
void ExpectRandomBuffersRefused(Decode decode) {
  std::mt19937_64 rng(20240611);
  for (int i = 0; i < 4000; ++i) {
    EXPECT_FALSE(decode(RandomBytes(rng, rng() % 600)).ok());
  }
  EXPECT_FALSE(decode(absl::string_view()).ok());
}

// Calls `check(bytes)` for 4000 buffers made of the first 8 bytes of `valid` (its root offset
// and file identifier) and a body of 8 + (0 to `spread` - 1) random bytes; every second one also
// gets a random root offset. Such buffers reach the Verifier's table checks instead of failing at
// the identifier.
template <typename Check>
void ForEachRandomBodyBehindTheIdentifier(const std::string& valid, size_t spread, Check check) {
  std::mt19937_64 rng(7);
  const std::string header = valid.substr(0, 8);
  for (int i = 0; i < 4000; ++i) {
    std::string bytes = header + RandomBytes(rng, 8 + rng() % spread);
    if (i % 2 == 1) {
      const uint32_t root = static_cast<uint32_t>(rng() % bytes.size());
      std::memcpy(bytes.data(), &root, sizeof(root));
    }
    check(bytes);
  }
}

// Every proper prefix of `valid`, each a fresh heap copy (so asan sees a read past its end), is
// refused with INVALID_ARGUMENT or decodes to what `valid` decodes to.
template <typename Decode>
void ExpectEveryTruncationRefusedOrExact(const std::string& valid, Decode decode) {
  const auto whole = decode(valid);
  for (size_t length = 0; length < valid.size(); ++length) {
    const std::string truncated = valid.substr(0, length);
    const auto decoded = decode(truncated);
    if (decoded.ok()) {
      ASSERT_TRUE(whole.ok()) << "length " << length;
      EXPECT_EQ(*decoded, *whole) << "length " << length;
    } else {
      EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << "length " << length;
    }
  }
}

// Calls `check(bytes)` for `valid` with one byte changed, for every byte in turn: each of its
// 8 bits flipped, then the byte set to 0x00 and to 0xff.
template <typename Check>
void ForEachFlippedBitAndSmashedByte(const std::string& valid, Check check) {
  for (size_t i = 0; i < valid.size(); ++i) {
    std::string variants;
    for (int bit = 0; bit < 8; ++bit) variants += static_cast<char>(valid[i] ^ (1 << bit));
    variants += '\x00';
    variants += '\xff';
    for (const char variant : variants) {
      std::string bytes = valid;
      bytes[i] = variant;
      check(bytes);
    }
  }
}

}  // namespace cohort

#endif  // COHORT_TEST_COMMON_HOSTILE_BYTES_H_
