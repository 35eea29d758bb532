#include "bench/service_step/step_driver.h"

#include <zlib.h>

#include <chrono>

#include "absl/strings/str_cat.h"

namespace maskd::service_bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Slot {
  uint64_t sequence_id = 0;
  size_t instance = 0;
  size_t next = 0;  // tokens of the instance sent so far
};

uint32_t DeflatedSize(const v1::Mask& mask) {
  const std::string raw = mask.SerializeAsString();
  uLongf size = compressBound(raw.size());
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                reinterpret_cast<const Bytef*>(raw.data()), raw.size(), 1) != Z_OK) {
    return static_cast<uint32_t>(raw.size());
  }
  return static_cast<uint32_t>(size);
}

}  // namespace

StreamStats DriveStream(const client::MaskdClient& client, const Workload& workload, size_t batch,
                        v1::MaskEncoding encoding, uint32_t dictionary_slots, size_t first_instance,
                        const std::atomic<bool>& stop, bool measure_deflate, size_t min_steps) {
  StreamStats stats;
  client::SessionOptions session_options;
  session_options.mask_dictionary_slots = dictionary_slots;
  std::unique_ptr<client::Session> session = client.StartSession(session_options);
  client::OpenOptions open;
  open.encoding = encoding;
  std::vector<Slot> slots(batch);
  uint64_t next_id = 1;
  size_t next_instance = first_instance;
  for (Slot& slot : slots) {
    slot.sequence_id = next_id++;
    slot.instance = next_instance++ % workload.instances.size();
    session->Open(slot.sequence_id, workload.handles[workload.instances[slot.instance].schema],
                  open);
  }
  do {
    // Results come one per op, in op order; remember which carry masks.
    const size_t ops = session->pending_ops();
    const Clock::time_point start = Clock::now();
    absl::StatusOr<std::vector<client::SequenceResult>> results = session->Step();
    stats.step_ns.Add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    if (!results.ok()) {
      stats.error = results.status().ToString();
      return stats;
    }
    stats.request_bytes += session->last_request_bytes();
    stats.response_bytes += session->last_response_bytes();
    for (size_t i = 0; i < ops; ++i) {
      const client::SequenceResult& result = (*results)[i];
      if (!result.ok()) {
        stats.error =
            absl::StrCat("sequence ", result.sequence_id(), ": ", result.status().ToString());
        return stats;
      }
      if (result.has_mask()) {
        ++stats.masks;
        if (result.wire_mask().encoding_case() == v1::Mask::kDictionaryRef) {
          ++stats.dictionary_refs;
        }
        stats.mask_bytes.push_back(static_cast<uint32_t>(result.wire_mask().ByteSizeLong()));
        if (measure_deflate) stats.deflated_mask_bytes.push_back(DeflatedSize(result.wire_mask()));
      }
    }
    // Next step: every slot advances one token, or closes its finished
    // instance and opens the next one.
    for (Slot& slot : slots) {
      const Instance& instance = workload.instances[slot.instance];
      if (slot.next < instance.tokens.size()) {
        session->Advance(slot.sequence_id, {&instance.tokens[slot.next], 1});
        ++slot.next;
        continue;
      }
      session->Close(slot.sequence_id);
      slot.sequence_id = next_id++;
      slot.instance = next_instance++ % workload.instances.size();
      slot.next = 0;
      session->Open(slot.sequence_id, workload.handles[workload.instances[slot.instance].schema],
                    open);
    }
  } while (!stop.load(std::memory_order_relaxed) || stats.step_ns.count() < min_steps);
  const absl::Status finished = session->Finish();
  if (!finished.ok()) stats.error = finished.ToString();
  return stats;
}

}  // namespace maskd::service_bench
