// End-to-end tests of Compile and Session against the real maskd binary with
// the real Llama 3 tokenizer: every spec kind, handles, the cache (seen in
// /metrics), spec and call errors with their codes, and Session streams whose
// masks must equal an in-process Matcher's, in every encoding, with
// per-sequence errors that leave the other sequences going; then the idle
// timeout and the drain on SIGTERM, each on a server of its own.
#include <signal.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/compile/compile.h"
#include "compiler/compile/token_healing.h"
#include "compiler/matcher/matcher.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "harness/maskd_process.h"
#include "maskd/v1/maskd.grpc.pb.h"
#include "service/mask_encoding.h"
#include "tests/service/http_get.h"

namespace maskd {
namespace {

using ::maskd::testing::HttpGet;
using ::maskd::testing::MaskdProcess;
using ::maskd::testing::TokenizerDir;
using ::testing::HasSubstr;

constexpr char kPersonSchema[] = R"({"type": "object", "properties": {
  "name": {"type": "string", "maxLength": 20},
  "age": {"type": "integer", "minimum": 0},
  "tags": {"type": "array", "items": {"enum": ["a", "b"]}}},
  "required": ["name", "age"], "additionalProperties": false})";
constexpr char kPersonDoc[] = R"({"name": "Ada", "age": 36, "tags": ["a"]})";

std::shared_ptr<grpc::Channel> Connect(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<grpc::ClientContext> Deadline(int seconds = 120) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return context;
}

// The value of one sample line ("name{labels} value") in a Prometheus text
// exposition; 0 when absent.
double Sample(const std::string& exposition, const std::string& series) {
  const size_t at = exposition.find("\n" + series + " ");
  if (at == std::string::npos) return 0;
  const size_t begin = at + series.size() + 2;
  double value = 0;
  const size_t end = exposition.find('\n', begin);
  EXPECT_TRUE(absl::SimpleAtod(exposition.substr(begin, end - begin), &value)) << series;
  return value;
}

// One bidirectional Session stream used step by step.
class Stream {
 public:
  explicit Stream(v1::Maskd::Stub* stub)
      : context_(Deadline()), rw_(stub->Session(context_.get())) {}

  // Sends `request` and reads its response; false if the stream ended.
  bool Step(const v1::StepRequest& request, v1::StepResponse* response) {
    return rw_->Write(request) && rw_->Read(response);
  }
  grpc::Status Close() {
    rw_->WritesDone();
    v1::StepResponse ignored;
    while (rw_->Read(&ignored)) {
    }
    return rw_->Finish();
  }
  grpc::ClientReaderWriter<v1::StepRequest, v1::StepResponse>& rw() { return *rw_; }

 private:
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StepRequest, v1::StepResponse>> rw_;
};

v1::SequenceOp* OpenByHandle(v1::StepRequest& request, uint64_t id, const std::string& handle,
                             v1::MaskEncoding encoding = v1::MASK_ENCODING_AUTO,
                             uint32_t max_rollback = 8) {
  v1::SequenceOp* op = request.add_ops();
  op->set_sequence_id(id);
  op->mutable_open()->set_handle(handle);
  op->mutable_open()->set_mask_encoding(encoding);
  op->mutable_open()->set_max_rollback_tokens(max_rollback);
  return op;
}

v1::AdvanceSequence* Advance(v1::StepRequest& request, uint64_t id) {
  v1::SequenceOp* op = request.add_ops();
  op->set_sequence_id(id);
  return op->mutable_advance();
}

class EngineRpcTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = TokenizerDir("llama3");
    absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer = Tokenizer::FromDirectory(dir);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status() << " (set MASKD_TOKENIZER_DIR)";
    tokenizer_ = new std::shared_ptr<const Tokenizer>(*tokenizer);
    absl::StatusOr<std::unique_ptr<MaskdProcess>> process = MaskdProcess::Start(
        {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", "--tokenizer=llama3=" + dir,
         "--max_spec_bytes=65536", "--max_ops_per_request=64", "--threads=2"});
    ASSERT_TRUE(process.ok()) << process.status();
    process_ = process->release();
  }

  static void TearDownTestSuite() {
    if (process_ != nullptr) {
      absl::StatusOr<int> exit_code = process_->Stop(SIGTERM, std::chrono::seconds(30));
      EXPECT_TRUE(exit_code.ok() && *exit_code == 0) << exit_code.status() << process_->Log();
    }
    delete process_;
    process_ = nullptr;
    delete tokenizer_;
    tokenizer_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(process_, nullptr) << "maskd did not start";
    stub_ = v1::Maskd::NewStub(Connect(process_->grpc_address()));
  }

  const Tokenizer& tokenizer() const { return **tokenizer_; }

  v1::CompileRequest SchemaRequest(const std::string& schema) const {
    v1::CompileRequest request;
    request.set_tokenizer_id(tokenizer().id());
    request.mutable_spec()->set_json_schema(schema);
    return request;
  }

  v1::CompileResponse Compile(const v1::CompileRequest& request) {
    v1::CompileResponse response;
    grpc::Status status = stub_->Compile(Deadline().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
    return response;
  }

  std::string CompileHandle(const v1::CompileRequest& request) {
    v1::CompileResponse response = Compile(request);
    EXPECT_TRUE(response.has_grammar()) << response.DebugString();
    return response.grammar().handle();
  }

  // The in-process engine's grammar for the same schema (the reference).
  std::shared_ptr<const CompiledGrammar> LocalGrammar(const std::string& schema) const {
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    spec.text = schema;
    auto grammar = CompileGrammar(spec, CompileOptions(), *tokenizer_);
    EXPECT_TRUE(grammar.ok()) << grammar.status();
    return grammar.ok() ? *grammar : nullptr;
  }

  std::vector<uint32_t> LocalMask(Matcher& matcher) const {
    std::vector<uint32_t> words((tokenizer().vocab_size() + 31) / 32);
    matcher.FillMask(words);
    return words;
  }

  std::string Metrics() { return HttpGet(process_->metrics_address(), "/metrics"); }

  static MaskdProcess* process_;
  static std::shared_ptr<const Tokenizer>* tokenizer_;
  std::unique_ptr<v1::Maskd::Stub> stub_;
};

MaskdProcess* EngineRpcTest::process_ = nullptr;
std::shared_ptr<const Tokenizer>* EngineRpcTest::tokenizer_ = nullptr;

TEST_F(EngineRpcTest, CompilesEverySpecKind) {
  std::vector<v1::CompileRequest> requests(4, SchemaRequest(kPersonSchema));
  requests[1].mutable_spec()->set_regex("[a-z]{1,8}@example\\.(com|org)");
  requests[2].mutable_spec()->mutable_choices()->add_choices("yes");
  requests[2].mutable_spec()->mutable_choices()->add_choices("no");
  requests[3].mutable_spec()->mutable_builtin_json();
  std::vector<std::string> handles;
  for (const v1::CompileRequest& request : requests) {
    v1::CompileResponse response = Compile(request);
    ASSERT_TRUE(response.has_grammar()) << response.DebugString();
    EXPECT_THAT(response.grammar().handle(), ::testing::MatchesRegex("[0-9a-f]{64}"));
    EXPECT_EQ(response.grammar().tokenizer_id(), tokenizer().id());
    EXPECT_GT(response.grammar().stats().size_bytes(), 0u);
    EXPECT_GT(response.grammar().stats().grammar_rules(), 0u);
    EXPECT_GE(response.grammar().stats().lexer_states(), 1u);  // the start state at least
    handles.push_back(response.grammar().handle());
  }
  EXPECT_EQ(std::set<std::string>(handles.begin(), handles.end()).size(), handles.size());

  // Grammars in each dialect; a bad one is a spec error with its line and
  // column, not a failed RPC.
  for (const auto& [dialect, text] : std::vector<std::pair<v1::GrammarDialect, std::string>>{
           {v1::GRAMMAR_DIALECT_GBNF, "root ::= \"a\" [0-9]+"},
           {v1::GRAMMAR_DIALECT_LARK, "start: \"a\" NUM\nNUM: /[0-9]+/"},
           {v1::GRAMMAR_DIALECT_EBNF, "root ::= \"a\" digit+\ndigit ::= [0-9]"}}) {
    v1::CompileRequest grammar = SchemaRequest("");
    grammar.mutable_spec()->mutable_grammar()->set_dialect(dialect);
    grammar.mutable_spec()->mutable_grammar()->set_text(text);
    v1::CompileResponse response = Compile(grammar);
    ASSERT_TRUE(response.has_grammar()) << text << ": " << response.DebugString();
    EXPECT_GT(response.grammar().stats().grammar_rules(), 0u);
  }
  v1::CompileRequest bad = SchemaRequest("");
  bad.mutable_spec()->mutable_grammar()->set_dialect(v1::GRAMMAR_DIALECT_GBNF);
  bad.mutable_spec()->mutable_grammar()->set_text("root ::= \"a\" |\n  item\nother ::= \"b\"");
  v1::CompileResponse response = Compile(bad);
  ASSERT_TRUE(response.has_error()) << response.DebugString();
  EXPECT_EQ(response.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.error().message(), HasSubstr("undefined rule 'item'"));
  EXPECT_EQ(response.error().location().text().line(), 2u);
  EXPECT_EQ(response.error().location().text().column(), 3u);
  EXPECT_EQ(response.error().location().text().byte_offset(), 17u);
  // An unreachable rule is a warning in the stats; the start rule is chosen.
  v1::CompileRequest other = bad;
  other.mutable_spec()->mutable_grammar()->set_text("root ::= \"a\"\nother ::= \"b\"");
  other.mutable_spec()->mutable_grammar()->set_start_rule("root");
  response = Compile(other);
  ASSERT_TRUE(response.has_grammar()) << response.DebugString();
  ASSERT_EQ(response.grammar().stats().warnings_size(), 1);
  EXPECT_EQ(response.grammar().stats().warnings(0),
            "rule 'other' (line 2:1) is unreachable from 'root'");
  other.mutable_spec()->mutable_grammar()->set_start_rule("other");
  EXPECT_NE(CompileHandle(other), response.grammar().handle());
}

// A bad tool list, and harmony for a tokenizer without harmony's special
// tokens, are spec errors in CompileResponse.error, not failed RPCs.
TEST_F(EngineRpcTest, ToolCallSpecErrorsAreInTheResponse) {
  v1::CompileRequest request = SchemaRequest("");
  v1::ToolCallsSpec* calls = request.mutable_spec()->mutable_tool_calls();
  calls->set_format(v1::TOOL_CALL_FORMAT_QWEN3);
  calls->add_tools()->set_name("a");
  calls->add_tools()->set_name("a");
  v1::CompileResponse response = Compile(request);
  ASSERT_TRUE(response.has_error()) << response.DebugString();
  EXPECT_EQ(response.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.error().message(), HasSubstr("repeats the name \"a\""));

  calls->mutable_tools(1)->set_name("b");
  calls->set_format(v1::TOOL_CALL_FORMAT_HARMONY);
  response = Compile(request);
  ASSERT_TRUE(response.has_error()) << response.DebugString();
  EXPECT_EQ(response.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.error().message(),
              HasSubstr("\"<|channel|>\" is not a special token of tokenizer"));
  calls->set_format(v1::TOOL_CALL_FORMAT_QWEN3);
  EXPECT_TRUE(Compile(request).has_grammar());
}

TEST_F(EngineRpcTest, GrammarSessionsOpenedInlineEqualTheInProcessMatcher) {
  struct Case {
    v1::GrammarDialect wire;
    EbnfDialect engine;
    std::string text, sentence;
  };
  const std::vector<Case> cases = {
      {v1::GRAMMAR_DIALECT_GBNF, EbnfDialect::kGbnf,
       "root ::= \"1. \" move \" \" move \"\\n\"\nmove ::= [a-h] [1-8] | [NBRQK] [a-h] [1-8]",
       "1. e4 Nf6\n"},
      {v1::GRAMMAR_DIALECT_LARK, EbnfDialect::kLark,
       "start: \"call(\" NAME (\",\" NAME)* \")\"\nNAME: /[a-z_]+/\n%import common.WS\n%ignore WS",
       "call(alpha, beta_x)"},
      {v1::GRAMMAR_DIALECT_EBNF, EbnfDialect::kW3cEbnf,
       "root ::= \"[\" num (\", \" num)* \"]\"\nnum ::= [1-9] [0-9]*", "[12, 7, 300]"}};
  int sequence = 500;
  for (const Case& c : cases) {
    GrammarSpec spec;
    spec.kind = SpecKind::kEbnf;
    spec.dialect = c.engine;
    spec.text = c.text;
    auto grammar = CompileGrammar(spec, CompileOptions(), *tokenizer_);
    ASSERT_TRUE(grammar.ok()) << grammar.status();
    auto local = Matcher::Create(*grammar);

    Stream stream(stub_.get());
    v1::StepRequest open;
    v1::SequenceOp* op = open.add_ops();
    op->set_sequence_id(++sequence);
    *op->mutable_open()->mutable_compile() = SchemaRequest("");
    op->mutable_open()->mutable_compile()->mutable_spec()->mutable_grammar()->set_dialect(c.wire);
    op->mutable_open()->mutable_compile()->mutable_spec()->mutable_grammar()->set_text(c.text);
    v1::StepResponse response;
    ASSERT_TRUE(stream.Step(open, &response));
    ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
    EXPECT_EQ(DecodeMask(response.results(0).mask()), LocalMask(*local)) << c.text;
    const std::vector<TokenId> tokens = tokenizer().Encode(c.sentence);
    for (size_t i = 0; i < tokens.size(); ++i) {
      v1::StepRequest step;
      Advance(step, sequence)->add_tokens(tokens[i]);
      ASSERT_TRUE(stream.Step(step, &response));
      const v1::SequenceResult& result = response.results(0);
      ASSERT_FALSE(result.has_error())
          << c.text << " token " << i << ": " << result.error().message();
      ASSERT_TRUE(local->AcceptToken(tokens[i])) << c.text << " token " << i;
      EXPECT_EQ(DecodeMask(result.mask()), LocalMask(*local)) << c.text << " after token " << i;
    }
    EXPECT_EQ(response.results(0).stop(),
              local->MustStop() ? v1::STOP_STATUS_MUST_STOP : v1::STOP_STATUS_MAY_STOP)
        << c.text;
    EXPECT_TRUE(stream.Close().ok());
  }
}

// Token healing through the real server (OpenSequence.prompt_tail_tokens):
// for prompts ending in "https:", " {", a partial word and an emoji's first
// bytes, the tokens to drop and the masks along a healed continuation equal
// the in-process engine's (HealPromptTail + required_prefix), opened inline
// and by handle (one healed compile, one healed handle).
TEST_F(EngineRpcTest, TokenHealingAtOpenEqualsTheInProcessEngine) {
  struct Case {
    std::string prompt;
    std::vector<std::string> choices;
    std::string raw_bytes;  // appended as single-byte tokens (a cut emoji)
    // Reasoning first: free text (any bytes, so also an emoji's last bytes,
    // which no choice on the wire can start with: choices are UTF-8).
    std::string reasoning_end_marker;
    std::string walk;  // the output after the removed bytes
  };
  const std::vector<Case> cases = {
      {"See https:", {"//example.com", "//maskd.dev/x"}, "", "", "//example.com"},
      {"Answer in JSON: {", {"\"a\": 1}", "}"}, "", "", "\"a\": 1}"},
      {"The capital of France is Par", {"is.", "isian"}, "", "", "isian"},
      {"Smile ", {"ok"}, "\xF0\x9F", "</think>", "\x98\x80 fine</think>ok"}};
  int sequence = 900;
  for (const Case& c : cases) {
    std::vector<TokenId> prompt = tokenizer().Encode(c.prompt);
    for (char byte : c.raw_bytes) {
      for (TokenId t = 0; t < tokenizer().vocab_size(); ++t) {
        if (tokenizer().token_bytes(t) == std::string(1, byte)) prompt.push_back(t);
      }
    }
    const std::vector<TokenId> tail(prompt.end() - std::min<size_t>(prompt.size(), 6),
                                    prompt.end());
    const Healing healing = HealPromptTail(tokenizer(), tail);
    ASSERT_GT(healing.tokens_to_drop, 0u) << c.prompt;
    GrammarSpec spec;
    spec.kind = SpecKind::kChoices;
    spec.choices = c.choices;
    CompileOptions options;
    options.required_prefix = healing.removed_bytes;
    options.reasoning_end_marker = c.reasoning_end_marker;
    auto grammar = CompileGrammar(spec, options, *tokenizer_);
    ASSERT_TRUE(grammar.ok()) << grammar.status();
    auto local = Matcher::Create(*grammar);

    v1::CompileRequest compile;
    compile.set_tokenizer_id(tokenizer().id());
    for (const std::string& choice : c.choices) {
      compile.mutable_spec()->mutable_choices()->add_choices(choice);
    }
    compile.mutable_options()->set_reasoning_end_marker(c.reasoning_end_marker);
    Stream stream(stub_.get());
    v1::StepRequest open;
    v1::SequenceOp* op = open.add_ops();
    op->set_sequence_id(++sequence);
    *op->mutable_open()->mutable_compile() = compile;
    op->mutable_open()->mutable_prompt_tail_tokens()->Add(tail.begin(), tail.end());
    // The same by handle, on a second sequence of the same request.
    v1::SequenceOp* by_handle = OpenByHandle(open, sequence + 50, CompileHandle(compile));
    by_handle->mutable_open()->mutable_prompt_tail_tokens()->Add(tail.begin(), tail.end());
    v1::StepResponse response;
    ASSERT_TRUE(stream.Step(open, &response));
    for (const v1::SequenceResult& result : response.results()) {
      ASSERT_FALSE(result.has_error()) << c.prompt << ": " << result.error().message();
      EXPECT_EQ(result.healing().prompt_tokens_to_drop(), healing.tokens_to_drop) << c.prompt;
      EXPECT_EQ(result.healing().removed_bytes(), healing.removed_bytes) << c.prompt;
      EXPECT_EQ(result.healing().healed_handle(), response.results(0).healing().healed_handle());
      EXPECT_EQ(DecodeMask(result.mask()), LocalMask(*local)) << c.prompt;
    }
    // Along the canonical tokenization of the healed text.
    const std::vector<TokenId> tokens = tokenizer().Encode(healing.removed_bytes + c.walk);
    for (size_t i = 0; i < tokens.size(); ++i) {
      v1::StepRequest step;
      Advance(step, sequence)->add_tokens(tokens[i]);
      ASSERT_TRUE(stream.Step(step, &response));
      ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
      ASSERT_TRUE(local->AcceptToken(tokens[i]));
      EXPECT_EQ(DecodeMask(response.results(0).mask()), LocalMask(*local)) << c.prompt << " " << i;
    }
    EXPECT_TRUE(local->CanStop());
    EXPECT_NE(response.results(0).stop(), v1::STOP_STATUS_CONTINUE);
    EXPECT_TRUE(stream.Close().ok());
  }
}

TEST_F(EngineRpcTest, HandlesAreContentHashesAndRepeatsHitTheCache) {
  // A schema no other test compiles, so the counters move by exactly this.
  const std::string schema = R"({"type": "string", "maxLength": 7, "pattern": "^q+$"})";
  const std::string before = Metrics();
  v1::CompileResponse first = Compile(SchemaRequest(schema));
  v1::CompileResponse second = Compile(SchemaRequest(schema));
  ASSERT_TRUE(first.has_grammar() && second.has_grammar());
  EXPECT_EQ(first.grammar().handle(), second.grammar().handle());
  EXPECT_FALSE(first.grammar().stats().cache_hit());
  EXPECT_TRUE(second.grammar().stats().cache_hit());

  // Options that change the language change the handle; the time limit does not.
  v1::CompileRequest compact = SchemaRequest(schema);
  compact.mutable_options()->set_whitespace(v1::WHITESPACE_MODE_COMPACT);
  EXPECT_NE(CompileHandle(compact), first.grammar().handle());
  v1::CompileRequest limited = SchemaRequest(schema);
  limited.mutable_options()->mutable_compile_time_limit()->set_seconds(5);
  EXPECT_EQ(CompileHandle(limited), first.grammar().handle());

  const std::string after = Metrics();
  const std::string ok_series =
      R"(maskd_compile_duration_seconds_count{kind="json_schema",outcome="ok"})";
  EXPECT_EQ(Sample(after, ok_series) - Sample(before, ok_series), 2);  // schema, compact
  const std::string hits = R"(maskd_cache_requests_total{result="hit"})";
  const std::string misses = R"(maskd_cache_requests_total{result="miss"})";
  EXPECT_EQ(Sample(after, hits) - Sample(before, hits), 2);  // second, limited
  EXPECT_EQ(Sample(after, misses) - Sample(before, misses), 2);
  EXPECT_GT(Sample(after, "maskd_cache_bytes"), 0);
  EXPECT_GE(Sample(after, "maskd_cache_entries"), 2);
  EXPECT_THAT(after, HasSubstr("\nmaskd_cache_evictions_total "));
}

TEST_F(EngineRpcTest, SpecErrorsComeInTheResponseWithTheirPlace) {
  v1::CompileResponse malformed = Compile(SchemaRequest(R"({"type": )"));
  ASSERT_TRUE(malformed.has_error());
  EXPECT_EQ(malformed.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_FALSE(malformed.error().message().empty());

  v1::CompileResponse unknown =
      Compile(SchemaRequest(R"({"type": "object", "properties": {"x": {"frobnicate": 1}}})"));
  ASSERT_TRUE(unknown.has_error()) << unknown.DebugString();
  EXPECT_EQ(unknown.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(unknown.error().message(), HasSubstr("frobnicate"));
  EXPECT_EQ(unknown.error().location().json_pointer(), "/properties/x");

  v1::CompileResponse remote = Compile(SchemaRequest(
      R"({"type": "object", "properties": {"y": {"$ref": "https://example.com/s.json"}}})"));
  ASSERT_TRUE(remote.has_error()) << remote.DebugString();
  EXPECT_EQ(remote.error().code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(remote.error().location().json_pointer(), "/properties/y/$ref")
      << remote.error().message();

  v1::CompileRequest lookahead = SchemaRequest("");
  lookahead.mutable_spec()->set_regex("ab(?=c)");
  v1::CompileResponse regex = Compile(lookahead);
  ASSERT_TRUE(regex.has_error()) << regex.DebugString();
  EXPECT_THAT(regex.error().code(), ::testing::AnyOf(grpc::StatusCode::INVALID_ARGUMENT,
                                                     grpc::StatusCode::UNIMPLEMENTED));
  EXPECT_EQ(regex.error().location().text().byte_offset(), 2u) << regex.error().message();
  EXPECT_EQ(regex.error().location().text().column(), 3u);
}

TEST_F(EngineRpcTest, CallErrorsFailTheRpc) {
  v1::CompileResponse response;
  v1::CompileRequest unknown = SchemaRequest(kPersonSchema);
  unknown.set_tokenizer_id("0123456789abcdef0123456789abcdef");
  grpc::Status status = stub_->Compile(Deadline().get(), unknown, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);

  v1::CompileRequest empty;
  empty.set_tokenizer_id(tokenizer().id());
  status = stub_->Compile(Deadline().get(), empty, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("spec"));

  v1::CompileRequest huge = SchemaRequest(
      absl::StrCat(R"({"type": "string", "description": ")", std::string(70000, 'x'), R"("})"));
  status = stub_->Compile(Deadline().get(), huge, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_spec_bytes"));
  EXPECT_THAT(status.error_message(), HasSubstr("65536"));

  const std::string metrics = Metrics();
  EXPECT_GE(Sample(metrics, R"(maskd_errors_total{code="NOT_FOUND"})"), 1);
  EXPECT_GE(Sample(metrics, R"(maskd_errors_total{code="RESOURCE_EXHAUSTED"})"), 1);
}

TEST_F(EngineRpcTest, SessionMasksEqualTheInProcessMatcher) {
  const std::string handle = CompileHandle(SchemaRequest(kPersonSchema));
  auto local = Matcher::Create(LocalGrammar(kPersonSchema), MatcherOptions{8});
  const std::vector<TokenId> tokens = tokenizer().Encode(kPersonDoc);
  ASSERT_GT(tokens.size(), 5u);

  Stream stream(stub_.get());
  v1::StepRequest open;
  open.set_request_id(1);
  OpenByHandle(open, 42, handle);
  v1::StepResponse response;
  ASSERT_TRUE(stream.Step(open, &response));
  EXPECT_EQ(response.request_id(), 1u);
  ASSERT_EQ(response.results_size(), 1);
  ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_EQ(DecodeMask(response.results(0).mask()), LocalMask(*local));
  EXPECT_EQ(response.results(0).stop(), v1::STOP_STATUS_CONTINUE);

  // One token per step; then every mask and stop status must match.
  for (size_t i = 0; i < tokens.size(); ++i) {
    v1::StepRequest step;
    step.set_request_id(100 + i);
    Advance(step, 42)->add_tokens(tokens[i]);
    ASSERT_TRUE(stream.Step(step, &response));
    ASSERT_EQ(response.request_id(), 100 + i);
    const v1::SequenceResult& result = response.results(0);
    ASSERT_FALSE(result.has_error()) << "token " << i << ": " << result.error().message();
    EXPECT_EQ(result.tokens_accepted(), 1u);
    ASSERT_TRUE(local->AcceptToken(tokens[i]));
    EXPECT_EQ(DecodeMask(result.mask()), LocalMask(*local)) << "after token " << i;
    const v1::StopStatus want = !local->CanStop()   ? v1::STOP_STATUS_CONTINUE
                                : local->MustStop() ? v1::STOP_STATUS_MUST_STOP
                                                    : v1::STOP_STATUS_MAY_STOP;
    EXPECT_EQ(result.stop(), want) << "after token " << i;
  }
  // Complete document: EOS is allowed and in the mask.
  std::vector<uint32_t> last = DecodeMask(response.results(0).mask());
  const TokenId eos = tokenizer().eos_ids().front();
  EXPECT_TRUE(last[eos / 32] >> (eos % 32) & 1);

  // EOS accepted: the sequence is finished. MUST_STOP with an empty mask
  // (nothing may follow, not even another EOS), as session.proto says.
  v1::StepRequest finish;
  Advance(finish, 42)->add_tokens(eos);
  ASSERT_TRUE(stream.Step(finish, &response));
  ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_EQ(response.results(0).tokens_accepted(), 1u);
  EXPECT_EQ(response.results(0).stop(), v1::STOP_STATUS_MUST_STOP);
  const std::vector<uint32_t> after_eos = DecodeMask(response.results(0).mask());
  EXPECT_EQ(std::count(after_eos.begin(), after_eos.end(), 0u),
            static_cast<std::ptrdiff_t>(after_eos.size()));
  v1::StepRequest again;
  Advance(again, 42)->add_tokens(eos);
  ASSERT_TRUE(stream.Step(again, &response));
  EXPECT_EQ(response.results(0).tokens_accepted(), 0u);
  EXPECT_TRUE(response.results(0).has_error());

  v1::StepRequest close;
  close.add_ops()->set_sequence_id(42);
  close.mutable_ops(0)->mutable_close();
  ASSERT_TRUE(stream.Step(close, &response));
  EXPECT_FALSE(response.results(0).has_error());
  EXPECT_FALSE(response.results(0).has_mask());
  EXPECT_TRUE(stream.Close().ok());
}

// PROPERTY_ORDER_ANY_ORDER end to end: keys out of schema order are taken
// (and the stream may stop), a repeated key is refused per sequence.
TEST_F(EngineRpcTest, AnyOrderPropertiesTakeKeysInAnyOrderOnce) {
  v1::CompileRequest request = SchemaRequest(kPersonSchema);
  request.mutable_options()->set_property_order(v1::PROPERTY_ORDER_ANY_ORDER);
  const std::string handle = CompileHandle(request);
  ASSERT_NE(handle, CompileHandle(SchemaRequest(kPersonSchema)));
  Stream stream(stub_.get());
  v1::StepRequest open;
  OpenByHandle(open, 1, handle);
  OpenByHandle(open, 2, handle);
  v1::StepResponse response;
  ASSERT_TRUE(stream.Step(open, &response));
  ASSERT_EQ(response.results_size(), 2);

  v1::StepRequest step;
  v1::AdvanceSequence* reordered = Advance(step, 1);
  for (TokenId t : tokenizer().Encode(R"({"tags": ["b"], "age": 36, "name": "Ada"})")) {
    reordered->add_tokens(t);
  }
  v1::AdvanceSequence* twice = Advance(step, 2);
  const std::vector<TokenId> repeated = tokenizer().Encode(R"({"age": 1, "age": 2})");
  for (TokenId t : repeated) twice->add_tokens(t);
  ASSERT_TRUE(stream.Step(step, &response));
  ASSERT_EQ(response.results_size(), 2);
  ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_NE(response.results(0).stop(), v1::STOP_STATUS_CONTINUE);  // whitespace may follow
  ASSERT_TRUE(response.results(1).has_error()) << "a repeated key was accepted";
  EXPECT_EQ(response.results(1).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(response.results(1).tokens_accepted(), repeated.size());
  EXPECT_TRUE(stream.Close().ok());
}

TEST_F(EngineRpcTest, AllEncodingsDecodeToTheSameMask) {
  const std::string handle = CompileHandle(SchemaRequest(kPersonSchema));
  const std::vector<TokenId> prefix = tokenizer().Encode(R"({"name": "A)");
  Stream stream(stub_.get());
  v1::StepRequest open;
  const v1::MaskEncoding encodings[] = {v1::MASK_ENCODING_BITMASK, v1::MASK_ENCODING_ALLOW_LIST,
                                        v1::MASK_ENCODING_DENY_LIST, v1::MASK_ENCODING_AUTO};
  for (int i = 0; i < 4; ++i) OpenByHandle(open, i, handle, encodings[i]);
  v1::StepResponse opened;
  ASSERT_TRUE(stream.Step(open, &opened));
  v1::StepRequest advance;
  for (int i = 0; i < 4; ++i) {
    Advance(advance, i)->mutable_tokens()->Add(prefix.begin(), prefix.end());
  }
  v1::StepResponse advanced;
  ASSERT_TRUE(stream.Step(advance, &advanced));
  // At the start only '{' (a handful of tokens) may come; inside a string
  // almost everything may: AUTO picks the allow list, then the deny list.
  for (const v1::StepResponse* response : {&opened, &advanced}) {
    ASSERT_EQ(response->results_size(), 4);
    const std::vector<uint32_t> reference = DecodeMask(response->results(0).mask());
    EXPECT_TRUE(response->results(0).mask().has_bitmask());
    EXPECT_TRUE(response->results(1).mask().has_allow_list());
    EXPECT_TRUE(response->results(2).mask().has_deny_list());
    for (int i = 0; i < 4; ++i) {
      const v1::Mask& mask = response->results(i).mask();
      EXPECT_EQ(DecodeMask(mask), reference) << "encoding " << i;
      EXPECT_EQ(mask.vocab_size(), tokenizer().vocab_size());
      uint32_t count = 0;
      for (uint32_t w : reference) count += std::popcount(w);
      EXPECT_EQ(mask.allowed_count(), count);
    }
  }
  EXPECT_TRUE(opened.results(3).mask().has_allow_list());
  EXPECT_TRUE(advanced.results(3).mask().has_deny_list());
  // AUTO is never larger than any fixed encoding.
  for (const v1::StepResponse* response : {&opened, &advanced}) {
    size_t smallest = SIZE_MAX;
    for (int i = 0; i < 3; ++i) {
      smallest = std::min(smallest, response->results(i).mask().ByteSizeLong());
    }
    EXPECT_LE(response->results(3).mask().ByteSizeLong(), smallest);
  }
  EXPECT_TRUE(stream.Close().ok());
}

TEST_F(EngineRpcTest, PerSequenceErrorsLeaveTheOthersGoing) {
  const std::string handle = CompileHandle(SchemaRequest(kPersonSchema));
  const std::vector<TokenId> brace = tokenizer().Encode("{");
  const std::vector<TokenId> digits = tokenizer().Encode("7");
  ASSERT_EQ(brace.size(), 1u);
  Stream stream(stub_.get());
  v1::StepRequest open;
  for (uint64_t id = 1; id <= 4; ++id) OpenByHandle(open, id, handle);
  OpenByHandle(open, 5, std::string(64, 'f'));  // never compiled here
  v1::StepResponse response;
  ASSERT_TRUE(stream.Step(open, &response));
  ASSERT_EQ(response.results_size(), 5);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(response.results(i).has_error());
  EXPECT_EQ(response.results(4).error().code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(response.results(4).error().message(), HasSubstr("inline"));

  v1::StepRequest step;
  Advance(step, 1)->add_tokens(brace[0]);                      // fine
  Advance(step, 2)->add_tokens(tokenizer().vocab_size() + 5);  // outside the vocabulary
  v1::AdvanceSequence* bad = Advance(step, 3);                 // '{' then a digit: not allowed
  bad->add_tokens(brace[0]);
  bad->add_tokens(digits[0]);
  Advance(step, 4)->set_rollback_tokens(3);  // nothing accepted yet
  Advance(step, 1)->add_tokens(brace[0]);    // duplicate id
  Advance(step, 9)->add_tokens(brace[0]);    // not open
  ASSERT_TRUE(stream.Step(step, &response));
  ASSERT_EQ(response.results_size(), 6);
  EXPECT_FALSE(response.results(0).has_error());
  EXPECT_TRUE(response.results(0).has_mask());
  EXPECT_EQ(response.results(1).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(1).error().message(), HasSubstr("tokens[0]"));
  EXPECT_THAT(response.results(1).error().message(), HasSubstr("vocabulary"));
  EXPECT_EQ(response.results(2).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(2).error().message(),
              HasSubstr(absl::StrCat("tokens[1] = ", digits[0])));
  EXPECT_EQ(response.results(2).tokens_accepted(), 1u);
  EXPECT_FALSE(response.results(2).has_mask());
  EXPECT_EQ(response.results(3).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(3).error().message(), HasSubstr("rollback"));
  EXPECT_EQ(response.results(4).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(4).error().message(), HasSubstr("more than once"));
  EXPECT_EQ(response.results(5).error().code(), grpc::StatusCode::NOT_FOUND);

  // Sequence 3 kept its '{': the same mask as sequence 1 now.
  v1::StepRequest again;
  Advance(again, 1);
  Advance(again, 3);
  ASSERT_TRUE(stream.Step(again, &response));
  ASSERT_FALSE(response.results(0).has_error());
  ASSERT_FALSE(response.results(1).has_error());
  EXPECT_EQ(DecodeMask(response.results(0).mask()), DecodeMask(response.results(1).mask()));
  EXPECT_TRUE(stream.Close().ok());
}

TEST_F(EngineRpcTest, InlineCompileDraftsRollbackAndJumpForward) {
  const std::string schema = R"({"type": "object", "properties": {"flag": {"const": true}},
      "required": ["flag"], "additionalProperties": false})";
  Stream stream(stub_.get());
  v1::StepRequest open;
  v1::SequenceOp* op = open.add_ops();
  op->set_sequence_id(7);
  *op->mutable_open()->mutable_compile() = SchemaRequest(schema);
  op->mutable_open()->mutable_compile()->mutable_options()->set_whitespace(
      v1::WHITESPACE_MODE_COMPACT);
  op->mutable_open()->set_max_rollback_tokens(4);
  v1::StepResponse response;
  ASSERT_TRUE(stream.Step(open, &response));
  ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  // Compact, one required key: the whole document is forced.
  EXPECT_EQ(response.results(0).jump_forward().bytes(), R"({"flag":true})");
  EXPECT_EQ(tokenizer().Decode(
                std::vector<TokenId>(response.results(0).jump_forward().token_ids().begin(),
                                     response.results(0).jump_forward().token_ids().end())),
            R"({"flag":true})");

  // Drafts: the forced tokens then one that cannot follow the end.
  const std::vector<TokenId> doc = tokenizer().Encode(R"({"flag":true})");
  v1::StepRequest step;
  v1::AdvanceSequence* advance = Advance(step, 7);
  advance->mutable_draft_tokens()->Add(doc.begin(), doc.end());
  advance->add_draft_tokens(doc.front());
  ASSERT_TRUE(stream.Step(step, &response));
  ASSERT_FALSE(response.results(0).has_error());
  EXPECT_EQ(response.results(0).drafts_accepted(), doc.size());
  EXPECT_NE(response.results(0).stop(), v1::STOP_STATUS_CONTINUE);  // whitespace may follow

  // Roll the last token back: not complete any more.
  v1::StepRequest undo;
  Advance(undo, 7)->set_rollback_tokens(1);
  ASSERT_TRUE(stream.Step(undo, &response));
  ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_EQ(response.results(0).stop(), v1::STOP_STATUS_CONTINUE);
  EXPECT_TRUE(stream.Close().ok());

  const std::string metrics = Metrics();
  EXPECT_GE(Sample(metrics, "maskd_jump_forward_bytes_total"), 13);
  EXPECT_GE(Sample(metrics, R"(maskd_tokens_total{result="accepted"})"), doc.size());
  EXPECT_GE(Sample(metrics, R"(maskd_tokens_total{result="rejected"})"), 1);
}

TEST_F(EngineRpcTest, TooManyOpsAreRefusedPerSequence) {
  Stream stream(stub_.get());
  v1::StepRequest step;
  for (int i = 0; i < 65; ++i) Advance(step, i);
  v1::StepResponse response;
  ASSERT_TRUE(stream.Step(step, &response));
  ASSERT_EQ(response.results_size(), 65);
  EXPECT_EQ(response.results(0).error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(response.results(0).error().message(), HasSubstr("--max_ops_per_request"));
  EXPECT_TRUE(stream.Close().ok());
}

TEST_F(EngineRpcTest, MetricsCountStepsSessionsAndMaskBytes) {
  const std::string handle = CompileHandle(SchemaRequest(kPersonSchema));
  const std::string before = Metrics();
  Stream stream(stub_.get());
  v1::StepRequest open;
  for (uint64_t id = 0; id < 3; ++id) OpenByHandle(open, id, handle, v1::MASK_ENCODING_BITMASK);
  v1::StepResponse response;
  ASSERT_TRUE(stream.Step(open, &response));
  // The step is counted once its response is written, which the client may
  // see before the server's write completion runs: wait for it.
  std::string during = Metrics();
  for (int i = 0; i < 200 && Sample(during, "maskd_step_batch_size_count") ==
                                 Sample(before, "maskd_step_batch_size_count");
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    during = Metrics();
  }
  EXPECT_EQ(Sample(during, "maskd_active_sessions") - Sample(before, "maskd_active_sessions"), 3);
  EXPECT_EQ(
      Sample(during, "maskd_step_batch_size_count") - Sample(before, "maskd_step_batch_size_count"),
      1);
  EXPECT_EQ(Sample(during, "maskd_mask_duration_seconds_count") -
                Sample(before, "maskd_mask_duration_seconds_count"),
            3);
  const std::string bitmask = R"(maskd_mask_bytes_total{encoding="bitmask"})";
  EXPECT_EQ(Sample(during, bitmask) - Sample(before, bitmask),
            3 * 4 * ((tokenizer().vocab_size() + 31) / 32));
  EXPECT_GE(Sample(during, "maskd_active_streams"), 1);
  EXPECT_TRUE(stream.Close().ok());
  // The stream's end closes its sequences.
  for (int i = 0; i < 100 && Sample(Metrics(), "maskd_active_sessions") !=
                                 Sample(before, "maskd_active_sessions");
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Sample(Metrics(), "maskd_active_sessions"), Sample(before, "maskd_active_sessions"));
  EXPECT_GE(Sample(Metrics(), "maskd_step_duration_seconds_count"), 1);
}

TEST(SessionLifecycleTest, IdleStreamsEndWithAClearStatus) {
  absl::StatusOr<std::unique_ptr<MaskdProcess>> process = MaskdProcess::Start(
      {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", "--session_idle_timeout=300ms"});
  ASSERT_TRUE(process.ok()) << process.status();
  auto stub = v1::Maskd::NewStub(Connect((*process)->grpc_address()));
  auto stream = std::make_unique<Stream>(stub.get());
  v1::StepRequest empty;
  empty.set_request_id(3);
  v1::StepResponse response;
  ASSERT_TRUE(stream->Step(empty, &response));
  EXPECT_EQ(response.request_id(), 3u);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(stream->rw().Read(&response));  // ends by itself
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  grpc::Status status = stream->rw().Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_THAT(status.error_message(), HasSubstr("--session_idle_timeout"));
  // Let go of the connection: the server's shutdown waits for open ones.
  stream.reset();
  stub.reset();
  absl::StatusOr<int> exit_code = (*process)->Stop(SIGTERM, std::chrono::seconds(30));
  EXPECT_TRUE(exit_code.ok() && *exit_code == 0) << (*process)->Log();
}

TEST(SessionLifecycleTest, SigtermEndsOpenStreamsWithUnavailableAndExitsZero) {
  absl::StatusOr<std::unique_ptr<MaskdProcess>> process = MaskdProcess::Start(
      {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", "--shutdown_grace=20s"});
  ASSERT_TRUE(process.ok()) << process.status();
  auto stub = v1::Maskd::NewStub(Connect((*process)->grpc_address()));
  auto stream = std::make_unique<Stream>(stub.get());
  v1::StepRequest empty;
  v1::StepResponse response;
  ASSERT_TRUE(stream->Step(empty, &response));
  // A health watcher (a load balancer) sees SERVING, then NOT_SERVING at
  // SIGTERM, and its call ends instead of holding up the drain.
  auto health_stub = grpc::health::v1::Health::NewStub(Connect((*process)->grpc_address()));
  auto watch_context = std::make_unique<grpc::ClientContext>();
  auto watch = health_stub->Watch(watch_context.get(), grpc::health::v1::HealthCheckRequest());
  grpc::health::v1::HealthCheckResponse health;
  ASSERT_TRUE(watch->Read(&health));
  EXPECT_EQ(health.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  // The grace is long: the exit must come from the stream ending itself.
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(kill((*process)->pid(), SIGTERM), 0);
  EXPECT_FALSE(stream->rw().Read(&response));
  grpc::Status status = stream->rw().Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("shutting down"));
  ASSERT_TRUE(watch->Read(&health));
  EXPECT_EQ(health.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_FALSE(watch->Read(&health));
  EXPECT_TRUE(watch->Finish().ok());
  // The server's shutdown also waits for the client to drop the connection.
  watch.reset();
  watch_context.reset();
  health_stub.reset();
  stream.reset();
  stub.reset();
  absl::StatusOr<int> exit_code = (*process)->Stop(SIGTERM, std::chrono::seconds(30));
  EXPECT_TRUE(exit_code.ok() && *exit_code == 0) << (*process)->Log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace maskd
