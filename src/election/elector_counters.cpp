// The renewal latency histogram of elector_counters.
#include <s3lect/elector_counters.hpp>

#include <cstddef>

namespace s3lect::inline v1 {

void latency_histogram::observe(std::chrono::microseconds latency) noexcept {
  std::size_t bucket = 0;
  while (bucket < bounds_ms.size() && latency > std::chrono::milliseconds{bounds_ms[bucket]}) {
    ++bucket;
  }
  ++counts[bucket];
  ++count;
  sum += latency;
}

}  // namespace s3lect::inline v1
