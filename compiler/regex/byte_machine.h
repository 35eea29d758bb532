// ByteMachine: a deterministic automaton over bytes whose states are 64-bit
// values computed on demand, for regular languages whose regex would be
// exponentially large (the decimal multiples of 7: a remainder per state).
// ExprSet holds each state as one expression (ExprKind::kMachine) whose
// derivative by a byte is the state Step gives, so machines combine with
// every other operator (And with a range regex, Not, Concat) and the lazy DFA
// only ever builds the states a walk reaches.
#ifndef MASKD_COMPILER_REGEX_BYTE_MACHINE_H_
#define MASKD_COMPILER_REGEX_BYTE_MACHINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/regex/byte_set.h"

namespace maskd::regex {

struct Fingerprint;

class ByteMachine {
 public:
  virtual ~ByteMachine() = default;

  // The initial state; it must be live.
  virtual uint64_t Start() const = 0;
  // The state after byte b, or nullopt when no accepted string goes on that
  // way. Every state a machine returns must be live (some string from it is
  // accepted): the pool treats machine states as never empty, exactly as it
  // does expressions without And or Not.
  virtual std::optional<uint64_t> Step(uint64_t state, uint8_t b) const = 0;
  virtual bool Accepting(uint64_t state) const = 0;
  // A partition of the bytes such that two bytes of one set step every state
  // alike (the pool's byte classes are refined by it).
  virtual std::vector<ByteSet> ByteClasses() const = 0;
  // Identifies the machine's language from each state in any pool: equal
  // identities must mean equal Step/Accepting functions (fingerprints of
  // machine states are built from it, horizon.h).
  virtual void FoldIdentity(Fingerprint& f) const = 0;
  // A short readable name, for ToString.
  virtual std::string Name() const = 0;
};

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_BYTE_MACHINE_H_
