// Random mask-guided walks for format_crosscheck.py: the mask oracle on a
// small vocabulary of single bytes and multi-byte tokens (some ending inside
// a UTF-8 code point, some spanning JSON escapes). Reads lines
// "SCHEMA<TAB>SEED<TAB>WALKS" and, for each walk, samples uniformly among
// the allowed tokens until it stops (EOS allowed, taken with probability
// 1/3) and prints one line:
//   OK <output>     the output (a JSON document) the walk ended with
//   STUCK <output>  no token allowed and EOS not allowed: a dead end the
//                   masks let the walk into (a mask bug)
//   X <output>      a token in the mask that AcceptToken refused, or the
//                   EOS bit disagreeing with CanStop (a bug)
//   BUDGET <output> stuck after the grammar's automata hit their budget
//                   (CompiledGrammar::status() not OK; a failure too)
//   LONG            no end within 600 tokens (not a verdict)
//   E:CODE          the schema did not compile
// The Python side checks every OK output with an independent reference.
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

std::vector<std::string> Vocabulary() {
  std::vector<std::string> vocab;
  for (int b = 1; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  for (const char* t :
       {"://",   "xn--", "==",   "=\"",   "{+",   "}/",  "%2",  "%2F",  "ab",       ".com",
        "@",     "\\\\", "\\\"", "\\\\d", "[a-",  "z]",  "(?:", ")*",   "{1,",      "2}",
        "\\u00", "é",    "ü",    "例",    "え",   "。",  "ß",   "\xc3", "\xe4\xbe", "/~",
        "~0",    "~1",   "#/",   "0/",    "\": ", "\"@", "a.",  "-b",   "AB",       "+/"}) {
    vocab.push_back(t);
  }
  return vocab;
}

bool Allowed(const std::vector<uint32_t>& mask, TokenId t) {
  return (mask[t / 32] >> (t % 32)) & 1;
}

std::string Walk(const std::shared_ptr<const CompiledGrammar>& g, std::mt19937& rng) {
  const Tokenizer& tok = g->tokenizer();
  const TokenId eos = tok.eos_ids()[0];
  auto m = Matcher::Create(g);
  std::vector<uint32_t> mask((tok.vocab_size() + 31) / 32);
  std::string out;
  for (int step = 0; step < 600; ++step) {
    m->FillMask(mask);
    if (Allowed(mask, eos) != m->CanStop()) return "X " + out;
    std::vector<TokenId> allowed;
    for (TokenId t = 0; t < eos; ++t) {
      if (Allowed(mask, t)) allowed.push_back(t);
    }
    if (m->CanStop() && (allowed.empty() || rng() % 3 == 0)) return "OK " + out;
    if (allowed.empty()) {
      // A lexer that hit its budget only loses tokens (CompiledGrammar::status()).
      return (g->status().ok() ? "STUCK " : "BUDGET(" + g->status().ToString() + ") ") + out;
    }
    const TokenId t = allowed[rng() % allowed.size()];
    if (!m->AcceptToken(t)) return "X " + out;
    out += tok.token_bytes(t);
  }
  return "LONG";
}

int Run() {
  auto tokenizer = std::make_shared<testing::SmallVocabTokenizer>(Vocabulary(), "format-walks");
  CompileOptions options;
  options.whitespace = WhitespaceMode::kCompact;
  std::string line;
  while (std::getline(std::cin, line)) {
    const size_t tab1 = line.find('\t');
    const size_t tab2 = tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
    if (tab2 == std::string::npos) {
      std::cerr << "format_walks_cli: expected SCHEMA<TAB>SEED<TAB>WALKS\n";
      return 2;
    }
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    spec.text = line.substr(0, tab1);
    std::mt19937 rng(std::stoul(line.substr(tab1 + 1, tab2 - tab1 - 1)));
    const int walks = std::stoi(line.substr(tab2 + 1));
    auto g = CompileGrammar(spec, options, tokenizer);
    for (int i = 0; i < walks; ++i) {
      std::cout << (g.ok() ? Walk(*g, rng) : "E:" + absl::StatusCodeToString(g.status().code()))
                << "\n";
    }
  }
  return 0;
}

}  // namespace
}  // namespace maskd

int main() { return maskd::Run(); }
