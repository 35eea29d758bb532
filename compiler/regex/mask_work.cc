#include "compiler/regex/mask_work.h"

namespace maskd::regex {
namespace {

thread_local int scope_depth = 0;
thread_local uint64_t work_used = 0;

}  // namespace

MaskWorkScope::MaskWorkScope() {
  if (scope_depth == 0) work_used = 0;
  ++scope_depth;
}

MaskWorkScope::~MaskWorkScope() { --scope_depth; }

std::optional<uint64_t> MaskWorkScope::Used() {
  if (scope_depth == 0) return std::nullopt;
  return work_used;
}

void MaskWorkScope::Charge(uint64_t units) {
  if (scope_depth > 0) work_used += units;
}

}  // namespace maskd::regex
