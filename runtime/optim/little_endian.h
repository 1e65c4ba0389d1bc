// Little-endian encoding of unsigned integers and of float/double arrays (IEEE 754 bit patterns),
// the byte order of the optimizer's serialised state on every host.
//
//   std::string bytes;
//   AppendLittleEndian(bytes, uint32_t{7});
//   LittleEndianReader reader(bytes);
//   uint32_t value;
//   if (!reader.Read(value)) { /* truncated */ }
//
// Thread-safety: a reader is not thread-safe; the functions are.
#ifndef COHORT_RUNTIME_OPTIM_LITTLE_ENDIAN_H_
#define COHORT_RUNTIME_OPTIM_LITTLE_ENDIAN_H_

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace cohort {

// The unsigned integer with the bits of a float or double.
template <class T>
using BitsOf = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <std::unsigned_integral U>
void AppendLittleEndian(std::string& out, U value) {
  for (size_t i = 0; i < sizeof(U); ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

template <std::floating_point T>
void AppendLittleEndian(std::string& out, const T* values, size_t count) {
  if constexpr (std::endian::native == std::endian::little) {
    out.append(reinterpret_cast<const char*>(values), count * sizeof(T));
  } else {
    for (size_t i = 0; i < count; ++i) AppendLittleEndian(out, std::bit_cast<BitsOf<T>>(values[i]));
  }
}

// Puts `count` values of T at `data`, written in this host's byte order, into little-endian order
// in place: nothing to do on a little-endian host.
template <std::floating_point T>
void ToLittleEndianInPlace(char* data, size_t count) {
  if constexpr (std::endian::native != std::endian::little) {
    for (size_t i = 0; i < count; ++i) {
      char* value = data + i * sizeof(T);
      BitsOf<T> bits;
      std::memcpy(&bits, value, sizeof(T));
      for (size_t k = 0; k < sizeof(T); ++k) value[k] = static_cast<char>((bits >> (8 * k)) & 0xff);
    }
  }
}

// Reads values in order from a byte string it does not own; every Read is bounds-checked.
class LittleEndianReader {
 public:
  explicit LittleEndianReader(absl::string_view bytes) : bytes_(bytes) {}

  size_t remaining() const { return bytes_.size(); }

  // False (consuming nothing) when fewer than sizeof(U) bytes remain.
  template <std::unsigned_integral U>
  bool Read(U& value) {
    if (bytes_.size() < sizeof(U)) return false;
    value = 0;
    for (size_t i = 0; i < sizeof(U); ++i)
      value |= static_cast<U>(static_cast<unsigned char>(bytes_[i])) << (8 * i);
    bytes_.remove_prefix(sizeof(U));
    return true;
  }

  // Passes over `bytes` bytes; false (consuming nothing) when fewer remain.
  bool Skip(size_t bytes) {
    if (bytes_.size() < bytes) return false;
    bytes_.remove_prefix(bytes);
    return true;
  }

  // False (consuming nothing) when fewer than count values remain.
  template <std::floating_point T>
  bool Read(T* values, size_t count) {
    if (bytes_.size() / sizeof(T) < count) return false;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(values, bytes_.data(), count * sizeof(T));
      bytes_.remove_prefix(count * sizeof(T));
    } else {
      for (size_t i = 0; i < count; ++i) {
        BitsOf<T> bits;
        Read(bits);
        values[i] = std::bit_cast<T>(bits);
      }
    }
    return true;
  }

 private:
  absl::string_view bytes_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OPTIM_LITTLE_ENDIAN_H_
