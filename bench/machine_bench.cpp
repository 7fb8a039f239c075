// The machine's own limits, for the physical bound of a step (README "Scale", the chain's
// bound): single-thread streaming bandwidth from main memory (read, copy, triad over arrays
// far larger than the caches; bytes/s as STREAM counts them, without the write-allocate
// read) and the clock, from a chain of dependent integer adds (one per cycle).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace {

constexpr std::size_t kDoubles = std::size_t{1} << 26;  // 512 MB per array

std::vector<double>& array(int k) {
  static std::vector<std::vector<double>> arrays(3, std::vector<double>(kDoubles, 1.0));
  return arrays[k];
}

void BM_StreamRead(benchmark::State& state) {
  const std::vector<double>& a = array(0);
  for (auto _ : state) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (std::size_t i = 0; i < kDoubles; i += 4) {
      s0 += a[i];
      s1 += a[i + 1];
      s2 += a[i + 2];
      s3 += a[i + 3];
    }
    benchmark::DoNotOptimize(s0 + s1 + s2 + s3);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kDoubles * 8));
}
BENCHMARK(BM_StreamRead)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_StreamCopy(benchmark::State& state) {
  const std::vector<double>& a = array(0);
  std::vector<double>& b = array(1);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kDoubles; ++i) b[i] = a[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kDoubles * 16));
}
BENCHMARK(BM_StreamCopy)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_StreamTriad(benchmark::State& state) {
  const std::vector<double>& a = array(0);
  const std::vector<double>& b = array(1);
  std::vector<double>& c = array(2);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kDoubles; ++i) c[i] = a[i] + 0.5 * b[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kDoubles * 24));
}
BENCHMARK(BM_StreamTriad)->Unit(benchmark::kMillisecond)->MinTime(1.0);

/// Dependent adds: one per cycle, so items per second is the clock (Hz).
void BM_Clock(benchmark::State& state) {
  constexpr std::int64_t kAdds = 100'000'000;
  for (auto _ : state) {
    std::uint64_t x = 1;
    for (std::int64_t i = 0; i < kAdds; ++i) {
#if defined(__x86_64__)
      asm volatile("add $1, %0" : "+r"(x));
#else
      x += 1;
      benchmark::DoNotOptimize(x);  // an upper bound of the cycle elsewhere
#endif
    }
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(state.iterations() * kAdds);
}
BENCHMARK(BM_Clock)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
