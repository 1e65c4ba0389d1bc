// Gradient codec throughput against memcpy: each codec encodes and then decodes a 64 MiB float32
// buffer (fp16, bf16, and top-k at ratio 0.01, whose decode is zeroing the buffer and
// scatter-adding the pairs), measured against memcpy of the same 64 MiB in the same run.
// Throughput is float32 bytes per second of the buffer: 64 MiB divided by the time of one
// encode plus one decode (or one memcpy), median over the repetitions. Times are the thread's CPU
// time, which a busy machine disturbs far less than wall time (everything runs on one thread).
//
//   codec_bench [REPETITIONS=7]
//
// Prints JSON lines {"name", "value" (the codec's GB/s), "unit": "GB/s", "peer": "memcpy",
// "peer_value" (memcpy's GB/s), "ratio" (value / peer_value: the codec's throughput as a
// fraction of memcpy's)}, one per codec: fp16_encode_decode_throughput,
// bf16_encode_decode_throughput, topk_0.01_encode_decode_throughput.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "runtime/exchange/compression/topk/topk_codec.h"
#include "runtime/exchange/compression/wire/bf16_codec.h"
#include "runtime/exchange/compression/wire/codec.h"
#include "runtime/exchange/compression/wire/fp16_codec.h"

namespace {

double ThreadCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

constexpr uint64_t kBytes = uint64_t{64} << 20;
constexpr uint64_t kCount = kBytes / sizeof(float);

// Median seconds of `repetitions` calls, after one untimed call.
double MedianSeconds(int repetitions, const std::function<void()>& call) {
  call();
  std::vector<double> seconds;
  for (int i = 0; i < repetitions; ++i) {
    const double start = ThreadCpuSeconds();
    call();
    seconds.push_back(ThreadCpuSeconds() - start);
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

double GigabytesPerSecond(double seconds) { return static_cast<double>(kBytes) / seconds / 1e9; }

void Report(const char* name, double seconds, double memcpy_seconds) {
  const double value = GigabytesPerSecond(seconds), peer = GigabytesPerSecond(memcpy_seconds);
  std::printf(
      "{\"name\": \"%s\", \"value\": %.3f, \"unit\": \"GB/s\", \"peer\": \"memcpy\", "
      "\"peer_value\": %.3f, \"ratio\": %.4f}\n",
      name, value, peer, value / peer);
  std::fflush(stdout);
}

double CodecSeconds(int repetitions, cohort::GradientCodec& codec, const std::vector<float>& grad,
                    std::vector<float>& out) {
  std::vector<uint16_t> wire(codec.EncodedBytes(kCount) / sizeof(uint16_t));
  return MedianSeconds(repetitions, [&] {
    codec.Encode(grad.data(), kCount, wire.data());
    codec.Decode(wire.data(), kCount, out.data());
  });
}

}  // namespace

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::atoi(argv[1]) : 7;
  if (repetitions < 1) {
    std::fprintf(stderr, "usage: %s [REPETITIONS >= 1]\n", argv[0]);
    return 2;
  }
  std::vector<float> grad(kCount), out(kCount);
  std::mt19937 random(1);
  std::normal_distribution<float> normal(0.0f, 1e-2f);
  for (float& g : grad) g = normal(random);

  const double memcpy_seconds =
      MedianSeconds(repetitions, [&] { std::memcpy(out.data(), grad.data(), kBytes); });

  cohort::Fp16Codec fp16;
  Report("fp16_encode_decode_throughput", CodecSeconds(repetitions, fp16, grad, out),
         memcpy_seconds);
  cohort::Bf16Codec bf16;
  Report("bf16_encode_decode_throughput", CodecSeconds(repetitions, bf16, grad, out),
         memcpy_seconds);

  cohort::TopKCompressor topk(kCount, 0.01);
  std::vector<uint32_t> indices(topk.k());
  std::vector<float> values(topk.k());
  const double topk_seconds = MedianSeconds(repetitions, [&] {
    topk.Compress(grad.data(), indices.data(), values.data());
    std::fill(out.begin(), out.end(), 0.0f);
    cohort::TopKCompressor::Accumulate(indices.data(), values.data(), topk.k(), out.data());
  });
  Report("topk_0.01_encode_decode_throughput", topk_seconds, memcpy_seconds);
  return 0;
}
