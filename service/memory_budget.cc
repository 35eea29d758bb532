#include "service/memory_budget.h"

#include <unistd.h>

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace maskd {

const char* MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kSessions:
      return "sessions";
    case MemoryKind::kSequences:
      return "sequences";
    case MemoryKind::kDictionaries:
      return "dictionaries";
    case MemoryKind::kCompiles:
      return "compiles";
    case MemoryKind::kRecipes:
      return "recipes";
    case MemoryKind::kCache:
      return "cache";
  }
  return "unknown";
}

void MemoryBudget::SetCache(std::function<size_t()> cache_bytes,
                            std::function<size_t(size_t bytes)> reclaim) {
  cache_bytes_ = std::move(cache_bytes);
  reclaim_ = std::move(reclaim);
}

size_t MemoryBudget::charged_total() const {
  size_t total = 0;
  for (const std::atomic<size_t>& c : charged_) total += c.load(std::memory_order_relaxed);
  return total;
}

size_t MemoryBudget::used(MemoryKind kind) const {
  if (kind == MemoryKind::kCache) return cache_bytes_ ? cache_bytes_() : 0;
  return charged_[static_cast<int>(kind)].load(std::memory_order_relaxed);
}

size_t MemoryBudget::used_total() const { return charged_total() + used(MemoryKind::kCache); }

std::string MemoryBudget::Usage() const {
  std::string out;
  for (int k = 0; k < kMemoryKinds; ++k) {
    absl::StrAppend(&out, k == 0 ? "" : ", ", MemoryKindName(static_cast<MemoryKind>(k)), " ",
                    used(static_cast<MemoryKind>(k)));
  }
  return out;
}

absl::Status MemoryBudget::TryCharge(MemoryKind kind, size_t bytes, absl::string_view what) {
  std::atomic<size_t>& slot = charged_[static_cast<int>(kind)];
  if (limit_ == 0) {
    slot.fetch_add(bytes, std::memory_order_relaxed);
    return absl::OkStatus();
  }
  // Fast path: fits without evicting anything.
  slot.fetch_add(bytes, std::memory_order_relaxed);
  if (used_total() <= limit_) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(reclaim_mu_);
  const size_t total = used_total();
  if (total > limit_ && reclaim_) reclaim_(total - limit_);
  if (used_total() <= limit_) return absl::OkStatus();
  slot.fetch_sub(bytes, std::memory_order_relaxed);
  refusals_[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
  return absl::ResourceExhaustedError(absl::StrCat(
      "memory budget exhausted: ", what, " needs ", bytes, " more bytes but this server's ", limit_,
      "-byte budget (--memory_budget_bytes) holds ", used_total(), " (", Usage(),
      "; the cache already gave back what it could)"));
}

void MemoryBudget::Charge(MemoryKind kind, size_t bytes) {
  charged_[static_cast<int>(kind)].fetch_add(bytes, std::memory_order_relaxed);
}

void MemoryBudget::Release(MemoryKind kind, size_t bytes) {
  charged_[static_cast<int>(kind)].fetch_sub(bytes, std::memory_order_relaxed);
}

void MemoryBudget::FitCache() {
  if (limit_ == 0 || !reclaim_) return;
  if (used_total() <= limit_) return;
  std::lock_guard<std::mutex> lock(reclaim_mu_);
  const size_t total = used_total();
  if (total > limit_) reclaim_(total - limit_);
}

namespace {

// The first line of `path` as a byte count; 0 if absent, "max" or not a number.
size_t ReadLimit(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return 0;
  uint64_t value = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &value)) return 0;
  return static_cast<size_t>(value);
}

// This process's cgroup v2 path ("0::/a/b" in /proc/self/cgroup), or "".
std::string OwnCgroupV2Path() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "";
}

size_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
}

}  // namespace

size_t CgroupMemoryLimitBytes(const std::string& cgroup_root) {
  // v2: our own cgroup (a container sees its own at the root), then the root.
  const std::string own = OwnCgroupV2Path();
  if (!own.empty() && own != "/") {
    if (size_t limit = ReadLimit(cgroup_root + own + "/memory.max"); limit > 0) return limit;
  }
  if (size_t limit = ReadLimit(cgroup_root + "/memory.max"); limit > 0) return limit;
  // v1 reports "no limit" as a huge number (PAGE_COUNTER_MAX pages).
  const size_t v1 = ReadLimit(cgroup_root + "/memory/memory.limit_in_bytes");
  if (v1 > 0 && v1 < (size_t{1} << 60)) return v1;
  return 0;
}

size_t DefaultMemoryBudgetBytes(const std::string& cgroup_root) {
  size_t limit = CgroupMemoryLimitBytes(cgroup_root);
  const size_t physical = PhysicalMemoryBytes();
  if (limit == 0 || (physical > 0 && limit > physical)) limit = physical;
  return limit / 5 * 3;
}

}  // namespace maskd
