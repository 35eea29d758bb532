#include "cache/clock.h"

#include "absl/time/clock.h"

namespace maskd {
namespace {

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace

const Clock& Clock::Real() {
  // Leaked on purpose: caches may outlive static destruction order.
  static const RealClock* const clock = new RealClock();
  return *clock;
}

}  // namespace maskd
