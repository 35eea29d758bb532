// libFuzzer target: the matcher under random token streams. The first byte
// picks a grammar from a fixed set (compiled once); the remaining bytes are
// operations. After every operation the matcher's promises are checked:
//  - AcceptToken(t) succeeds iff bit t of FillMask is set (checked on the
//    matcher and on clones, so a rejected token must leave the state intact);
//  - the EOS bit is set iff CanStop();
//  - Rollback(k) restores exactly the mask seen k tokens ago;
//  - Reset returns to the initial mask.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "tests/fuzz/fuzz_vocab.h"

namespace {

using maskd::CompiledGrammar;
using maskd::GrammarSpec;
using maskd::Matcher;
using maskd::SpecKind;
using maskd::TokenId;

std::vector<std::shared_ptr<const CompiledGrammar>> BuildGrammars() {
  const std::vector<std::pair<SpecKind, std::string>> specs = {
      {SpecKind::kBuiltinJson, ""},
      {SpecKind::kJsonSchema,
       R"({"type":"object","properties":{"name":{"type":"string","maxLength":5},)"
       R"("age":{"type":"integer","minimum":-3,"maximum":120}},"required":["name"]})"},
      {SpecKind::kJsonSchema,
       R"({"type":"array","items":{"enum":["a","ab",1.5,null,true]},"maxItems":4})"},
      {SpecKind::kJsonSchema,
       R"({"anyOf":[{"type":"string","pattern":"^[a-c]+\\d?$"},{"type":"number"}]})"},
      {SpecKind::kJsonSchema,
       R"({"$defs":{"t":{"type":"object","properties":{"c":{"type":"array",)"
       R"("items":{"$ref":"#/$defs/t"}}},"additionalProperties":false}},"$ref":"#/$defs/t"})"},
      {SpecKind::kJsonSchema, R"({"type":"string","format":"date"})"},
      {SpecKind::kRegex, "(ab|a)*c?[0-9]{1,3}"},
      {SpecKind::kRegex, "\\{\"[a-z]+\":(true|null)\\}|é+"},
      {SpecKind::kChoices, ""},
  };
  std::vector<std::shared_ptr<const CompiledGrammar>> out;
  for (const auto& [kind, text] : specs) {
    GrammarSpec spec;
    spec.kind = kind;
    spec.text = text;
    if (kind == SpecKind::kChoices) spec.choices = {"yes", "no", "n/a", "nothing"};
    auto g = CompileGrammar(spec, maskd::fuzz::FuzzCompileOptions(), maskd::fuzz::FuzzVocab());
    if (!g.ok()) std::abort();  // The fixed set must compile.
    out.push_back(*g);
  }
  return out;
}

bool Bit(const std::vector<uint32_t>& mask, TokenId t) { return (mask[t / 32] >> (t % 32)) & 1; }

// Picks a token: usually an allowed one (so streams get deep), sometimes any.
TokenId PickToken(const std::vector<uint32_t>& mask, size_t vocab, uint8_t a, uint8_t b) {
  if (a % 4 == 0) return static_cast<TokenId>(b % vocab);
  std::vector<TokenId> allowed;
  for (TokenId t = 0; t < vocab; ++t) {
    if (Bit(mask, t)) allowed.push_back(t);
  }
  if (allowed.empty()) return static_cast<TokenId>(b % vocab);
  return allowed[b % allowed.size()];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto* grammars =
      new std::vector<std::shared_ptr<const CompiledGrammar>>(BuildGrammars());
  if (size < 1 || size > 4096) return 0;
  const size_t vocab = maskd::fuzz::FuzzVocab()->vocab_size();
  const TokenId eos = maskd::fuzz::FuzzVocab()->eos_ids()[0];
  maskd::MatcherOptions options;
  options.max_rollback = 8;
  std::unique_ptr<Matcher> m = Matcher::Create((*grammars)[data[0] % grammars->size()], options);

  std::vector<uint32_t> mask((vocab + 31) / 32);
  std::vector<uint32_t> other(mask.size());
  m->FillMask(mask);
  const std::vector<uint32_t> initial = mask;
  // masks[i] = the mask after the i-th accepted token still kept (masks[0]
  // before any), for checking Rollback; stopped: whether EOS was accepted.
  std::vector<std::vector<uint32_t>> masks = {mask};
  bool stopped = false;
  std::vector<bool> stops = {false};
  for (size_t i = 1; i + 2 < size; i += 3) {
    const uint8_t op = data[i], a = data[i + 1], b = data[i + 2];
    switch (op % 8) {
      default: {  // Accept a token (most operations).
        const TokenId t = PickToken(mask, vocab, a, b);
        // A clone must agree before the real matcher moves.
        if (m->Clone()->AcceptToken(t) != Bit(mask, t)) std::abort();
        const bool accepted = m->AcceptToken(t);
        if (accepted != Bit(mask, t)) std::abort();
        m->FillMask(other);
        if (!accepted) {
          if (other != mask) std::abort();  // A rejected token changed the state.
          break;
        }
        mask = other;
        stopped = stopped || t == eos;
        masks.push_back(mask);
        stops.push_back(stopped);
        if (masks.size() > options.max_rollback + 1) {
          masks.erase(masks.begin());
          stops.erase(stops.begin());
        }
        if (t == eos && (!m->CanStop() || m->AcceptToken(eos))) std::abort();
        break;
      }
      case 5: {  // Roll back some tokens.
        const uint32_t k = a % (masks.size() + 1);
        const absl::Status s = m->Rollback(k);
        if (k + 1 > masks.size()) {
          if (s.ok()) std::abort();  // Beyond the kept history.
          break;
        }
        if (!s.ok()) std::abort();
        masks.resize(masks.size() - k);
        stops.resize(stops.size() - k);
        stopped = stops.back();
        m->FillMask(mask);
        if (mask != masks.back()) std::abort();
        break;
      }
      case 6: {  // Jump-forward bytes must be acceptable.
        maskd::JumpForward jf = m->ComputeJumpForward();
        std::unique_ptr<Matcher> c = m->Clone();
        if (!jf.bytes.empty() && !c->AcceptBytes(jf.bytes)) std::abort();
        break;
      }
      case 7:
        if (a % 8 == 0) {
          m->Reset();
          masks = {initial};
          stops = {false};
          stopped = false;
          m->FillMask(mask);
          if (mask != initial) std::abort();
        }
        break;
    }
    if (stopped) {
      // After EOS nothing more is allowed, and the output stays complete.
      for (uint32_t w : mask) {
        if (w != 0) std::abort();
      }
      if (!m->CanStop()) std::abort();
    } else if (Bit(mask, eos) != m->CanStop()) {
      std::abort();
    }
  }
  return 0;
}
