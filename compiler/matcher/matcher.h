// The per-sequence matcher: which tokens may come next, exactly.
//
// Exactness contract (DESIGN.md §3): with output bytes so far `p`, token `t` is
// allowed iff some string of the grammar's language starts with p + bytes(t);
// EOS is allowed iff p itself is in the language. A special token other than
// EOS is allowed only where the grammar has a token terminal naming it
// (grammar.h TokenTerminal): outputs are then sequences of text and whole
// tokens, text never matched by a special token nor a token terminal by text.
//
// A CompiledGrammar is immutable and shared by any number of matchers on any
// number of threads; a Matcher is owned by one sequence and used by one thread
// at a time. Grammars are compiled from a spec by CompileGrammar
// (compiler/compile/compile.h), the layer above this one.
#ifndef MASKD_COMPILER_MATCHER_MATCHER_H_
#define MASKD_COMPILER_MATCHER_MATCHER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd {

struct CompileStats {
  uint64_t compile_time_us = 0;
  uint64_t size_bytes = 0;  // estimate, for the cache's byte budget
  uint32_t lexemes = 0;
  uint32_t rules = 0;
  // JSON Schema keywords skipped in permissive mode, as "keyword at /pointer".
  std::vector<std::string> ignored_keywords;
  // What a front end accepted but flags (a grammar rule the start rule
  // cannot reach), e.g. "rule 'x' (line 3:1) is unreachable from 'root'".
  std::vector<std::string> warnings;
};

class CompiledGrammar {
 public:
  virtual ~CompiledGrammar() = default;
  virtual const CompileStats& stats() const = 0;
  virtual const Tokenizer& tokenizer() const = 0;
  // Current memory use, growing as lazily built automata fill in.
  virtual size_t SizeBytes() const = 0;
  // Lexer automaton states built so far: the start state at compile time,
  // more as masks are computed (the lexer DFA is built lazily).
  virtual size_t LexerStates() const = 0;
  // OK, or why a lazily built automaton hit a limit after Compile returned
  // (the lexer DFA's state or memory budget, AutomataLimits::memory_limit_bytes).
  // Growth stops there; masks computed since may lack tokens (never hold extra
  // ones), so a caller seeing an error must fail the sequence, not trust them.
  virtual absl::Status status() const = 0;
};

// Builds what every grammar compiled for `tokenizer` shares (the token trie
// of its vocabulary), once per tokenizer id for the life of the process, so
// that no Compile pays it; Compile does it on demand otherwise. Call it where
// a tokenizer is loaded. InvalidArgument when the vocabulary cannot be indexed.
absl::Status PrepareTokenizer(std::shared_ptr<const Tokenizer> tokenizer);

// PrepareTokenizer, and a handle sharing ownership of the tokenizer's index:
// its use_count() is 2 (the process-wide cache and this handle) while no
// compiled grammar uses the tokenizer, more while some do. The service's
// tokenizer registry uses it to evict only unused tokenizers.
absl::StatusOr<std::shared_ptr<const void>> PrepareTokenizerIndex(
    std::shared_ptr<const Tokenizer> tokenizer);

// Drops the process-wide cache's reference to the index of tokenizer `id`
// (a tokenizer unregistered from the service): the index and its mask store
// are freed once the last grammar using them goes. A later compile for the
// same tokenizer builds it again.
void ReleaseTokenizerIndex(const std::string& id);

struct JumpForward {
  std::string bytes;            // the only bytes that can come next (may be empty)
  std::vector<TokenId> tokens;  // their canonical tokenization (the tokenizer's BPE)
};

struct MatcherOptions {
  // How many accepted tokens Rollback can undo.
  uint32_t max_rollback = 32;
  // Most lexemes the parser may hold (one Earley set each, so this bounds a
  // sequence's memory: `[` x 1M on any JSON is 1M sets; the lexeme still
  // being read is not counted until the next byte ends it); a token that
  // would pass it is refused (HitDepthLimit()). 0: none.
  size_t max_parser_depth = 0;
};

class Matcher {
 public:
  static std::unique_ptr<Matcher> Create(std::shared_ptr<const CompiledGrammar> grammar,
                                         const MatcherOptions& options = {});
  virtual ~Matcher() = default;

  // Advances by one token. A token the mask does not allow returns false and
  // leaves the state unchanged. EOS is accepted only where CanStop().
  virtual bool AcceptToken(TokenId token) = 0;
  // Advances by raw bytes (all or nothing).
  virtual bool AcceptBytes(std::string_view bytes) = 0;

  // Writes the allowed-token bitmask: bit i of words[i / 32] = token i. `words`
  // must hold at least (vocab_size + 31) / 32 entries; extra words are zeroed.
  virtual void FillMask(std::span<uint32_t> words) = 0;

  // The output so far is a complete sentence (EOS allowed).
  virtual bool CanStop() const = 0;
  // Complete, and no token can extend it: only EOS is allowed.
  virtual bool MustStop() = 0;
  // Undoes the last `n` accepted tokens, EOS included (OutOfRange beyond the
  // MatcherOptions::max_rollback tokens kept).
  virtual absl::Status Rollback(uint32_t n) = 0;
  // The bytes every continuation must start with (empty when the next byte is
  // not forced or the output may end here), cut at a UTF-8 character
  // boundary, and their tokenization by the tokenizer's own encoder.
  virtual JumpForward ComputeJumpForward() = 0;
  virtual void Reset() = 0;
  virtual std::unique_ptr<Matcher> Clone() const = 0;

  // Lexemes the parser holds (the output's, but the one still being read).
  virtual size_t ParserDepth() const = 0;
  // Whether the last AcceptToken/AcceptBytes that returned false refused
  // because the output would pass MatcherOptions::max_parser_depth (the
  // grammar itself may allow the token).
  virtual bool HitDepthLimit() const = 0;
  // Approximate heap bytes this matcher holds (its parser's buffers at their
  // high-water mark, the rollback history); O(1), for memory budgets.
  virtual size_t MemoryBytes() const = 0;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_MATCHER_H_
