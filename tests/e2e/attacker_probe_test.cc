// Issue 13, finding 1.1's class, tried as an attacker would: every input
// the service parses (JSON Schema with $ref chains, regex, GBNF, W3C EBNF,
// Lark, structural tags, choices, tokenizer.json in RegisterTokenizer), sent
// to the real maskd over gRPC on loopback nested 10,000 deep, chained 10,000
// links long and about 1 MiB flat, and invalid UTF-8 in every string field.
// Each gets an answer (a handle, or an error that says what is wrong: the
// limit by name, the field, or the place), while a victim stream steps
// beside them and keeps getting its masks; afterwards the server is healthy
// and exits 0 on SIGTERM. A stack overflow (or, under ASan, any memory
// error) kills the server, which fails every later probe, the victim and
// the exit code.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clients/cpp/spec.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/data_paths.h"
#include "maskd/v1/maskd.grpc.pb.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr size_t kDeep = 10'000;
// Under the 1 MiB --max_spec_bytes, with room for the rest of the request.
// Sanitizer builds compile ~50x slower: flat inputs are 1/32 there (31 KB,
// the size that overflowed the stack per byte before), deep ones stay
// 10,000 deep.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kFlatBytes = 1'000'000 / 32;
// Long enough for every probe to reach its real answer rather than the
// time limit (under the client's 120 s deadline).
constexpr char kCompileTimeLimitFlag[] = "--compile_time_limit=100s";
#else
constexpr size_t kFlatBytes = 1'000'000;
constexpr char kCompileTimeLimitFlag[] = "--compile_time_limit=10s";
#endif

std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out.append(s);
  return out;
}

// `n` definitions chained by $ref, each wrapping the next in `wrap` (where
// NEXT stands for the reference), the last one an integer.
std::string RefChain(const std::string& wrap, size_t n) {
  std::string defs;
  for (size_t i = 0; i < n; ++i) {
    std::string body(wrap);
    body.replace(body.find("NEXT"), 4, absl::StrCat(R"({"$ref":"#/$defs/d)", i + 1, R"("})"));
    absl::StrAppend(&defs, "\"d", i, "\":", body, ",");
  }
  absl::StrAppend(&defs, "\"d", n, R"(":{"type":"integer"})");
  return absl::StrCat(R"({"$ref":"#/$defs/d0","$defs":{)", defs, "}}");
}

// Rules r0 ... r`n` where r_i is `body` with NEXT for r_(i+1), in GBNF /
// EBNF (`::=`) or Lark (`:`) syntax; the last is "y".
std::string RuleChain(const std::string& head, const std::string& def, const std::string& body,
                      size_t n, const std::string& prefix = "r") {
  std::string out = absl::StrCat(head, prefix, "0\n");
  for (size_t i = 0; i < n; ++i) {
    std::string b(body);
    b.replace(b.find("NEXT"), 4, absl::StrCat(prefix, i + 1));
    absl::StrAppend(&out, prefix, i, def, b, "\n");
  }
  absl::StrAppend(&out, prefix, n, def, "\"y\"\n");
  return out;
}

v1::ConstraintSpec Grammar(v1::GrammarDialect dialect, std::string text) {
  return client::GrammarSpec(dialect, std::move(text));
}

struct Probe {
  std::string name;
  v1::ConstraintSpec spec;
  // Empty: any answer that is not a server failure (a handle, or a spec
  // error with a message). Otherwise the compile must fail with a message
  // holding this.
  std::string refused_with;
};

std::vector<Probe> SpecProbes() {
  const auto kGbnf = v1::GRAMMAR_DIALECT_GBNF;
  const auto kEbnf = v1::GRAMMAR_DIALECT_EBNF;
  const auto kLark = v1::GRAMMAR_DIALECT_LARK;
  std::vector<Probe> probes;
  auto add = [&](std::string name, v1::ConstraintSpec spec, std::string refused_with = "") {
    probes.push_back({std::move(name), std::move(spec), std::move(refused_with)});
  };
  // ---- JSON Schema. ----
  add("schema: items 10,000 deep",
      client::JsonSchemaSpec(Repeat(R"({"items":)", kDeep) + "true" + Repeat("}", kDeep)),
      "max_recursion_depth");
  add("schema: anyOf 10,000 deep",
      client::JsonSchemaSpec(Repeat(R"({"anyOf":[)", kDeep) + "true" + Repeat("]}", kDeep)),
      "max_recursion_depth");
  add("schema: not 10,000 deep",
      client::JsonSchemaSpec(Repeat(R"({"not":)", kDeep) + "true" + Repeat("}", kDeep)),
      "max_recursion_depth");
  add("schema: $ref chain of 10,000 links", client::JsonSchemaSpec(RefChain("NEXT", kDeep)));
  add("schema: $ref chain of 10,000 arrays",
      client::JsonSchemaSpec(RefChain(R"({"type":"array","items":NEXT})", kDeep)));
  add("schema: $ref chain of 10,000 required properties",
      client::JsonSchemaSpec(
          RefChain(R"({"type":"object","properties":{"a":NEXT},"required":["a"]})", kDeep)));
  add("schema: $ref chain of 10,000 anyOf",
      client::JsonSchemaSpec(RefChain(R"({"anyOf":[NEXT,{"type":"null"}]})", kDeep)));
  add("schema: $ref chain of 10,000 not",
      client::JsonSchemaSpec(RefChain(R"({"not":NEXT})", kDeep)));
  add("schema: $ref chain of 10,000 allOf",
      client::JsonSchemaSpec(RefChain(R"({"allOf":[NEXT,{"minimum":0}]})", kDeep)));
  add("schema: 1 MB pattern literal",
      client::JsonSchemaSpec(R"({"type":"string","pattern":")" + Repeat("a", kFlatBytes) + "\"}"));
  add("schema: 1 MB of properties", client::JsonSchemaSpec([] {
        std::string s = R"({"type":"object","properties":{)";
        for (size_t i = 0; s.size() < kFlatBytes; ++i) absl::StrAppend(&s, "\"p", i, "\":true,");
        return s + R"("last":true}})";
      }()));
  add("schema: 1 MB enum", client::JsonSchemaSpec([] {
        std::string s = R"({"enum":[)";
        for (size_t i = 0; s.size() < kFlatBytes; ++i) absl::StrAppend(&s, i, ",");
        return s + "0]}";
      }()));
  add("schema: 1 MB property name",
      client::JsonSchemaSpec(R"({"required":[")" + Repeat("k", kFlatBytes) + "\"]}"));
  // ---- Regex. ----
  add("regex: groups 10,000 deep", client::RegexSpec(Repeat("(", kDeep) + "a" + Repeat(")", kDeep)),
      "max_recursion_depth");
  add("regex: lookahead 10,000 deep",
      client::RegexSpec(Repeat("(?=", kDeep) + "a" + Repeat(")", kDeep)));
  add("regex: 10,000 quantifiers on one atom", client::RegexSpec("a" + Repeat("{1}", kDeep)));
  add("regex: 1 MB literal", client::RegexSpec(Repeat("a", kFlatBytes)));
  add("regex: 1 MB alternation", client::RegexSpec(Repeat("ab|", kFlatBytes / 3) + "c"));
  add("regex: 1 MB optionals", client::RegexSpec(Repeat("[ab]?", kFlatBytes / 5)));
  add("regex: 1 MB of classes", client::RegexSpec("[" + Repeat("a-b", kFlatBytes / 3) + "]"));
  // ---- GBNF, W3C EBNF, Lark. ----
  for (const auto& [dialect, label, head, def] :
       {std::tuple{kGbnf, "gbnf", std::string("root ::= "), std::string(" ::= ")},
        std::tuple{kEbnf, "ebnf", std::string("root ::= "), std::string(" ::= ")}}) {
    add(absl::StrCat(label, ": groups 10,000 deep"),
        Grammar(dialect, head + Repeat("(", kDeep) + "\"a\"" + Repeat(")", kDeep)),
        "max_recursion_depth");
    add(absl::StrCat(label, ": 10,000 postfix operators"),
        Grammar(dialect, head + std::string("\"a\"") + Repeat("?", kDeep)));
    add(absl::StrCat(label, ": 1 MB of postfix operators"),
        Grammar(dialect, head + std::string("\"a\"") + Repeat("*", kFlatBytes)));
    add(absl::StrCat(label, ": chain of 10,000 rules"),
        Grammar(dialect, RuleChain(head, def, "\"x\" NEXT | \"z\"", kDeep)));
    add(absl::StrCat(label, ": chain of 3,000 regular rules"),
        Grammar(dialect, RuleChain(head, def, "\"x\" NEXT | \"z\"", 3000)));
    add(absl::StrCat(label, ": chain of 10,000 unit rules"),
        Grammar(dialect, RuleChain(head, def, "NEXT", kDeep)));
    add(absl::StrCat(label, ": 1 MB sequence"),
        Grammar(dialect, head + Repeat("\"a\" ", kFlatBytes / 4)));
    add(absl::StrCat(label, ": 1 MB literal"),
        Grammar(dialect, head + "\"" + Repeat("a", kFlatBytes) + "\""));
    add(absl::StrCat(label, ": 1 MB alternation"),
        Grammar(dialect, head + Repeat("\"a\" | ", kFlatBytes / 6) + "\"b\""));
  }
  add("lark: groups 10,000 deep",
      Grammar(kLark, "start: " + Repeat("(", kDeep) + "\"a\"" + Repeat(")", kDeep)),
      "max_recursion_depth");
  add("lark: optionals 10,000 deep",
      Grammar(kLark, "start: " + Repeat("[", kDeep) + "\"a\"" + Repeat("]", kDeep)),
      "max_recursion_depth");
  add("lark: 10,000 postfix operators", Grammar(kLark, "start: \"a\"" + Repeat("?", kDeep)),
      "max_recursion_depth");
  add("lark: 1 MB of postfix operators", Grammar(kLark, "start: \"a\"" + Repeat("*", kFlatBytes)),
      "max_recursion_depth");
  add("lark: chain of 10,000 terminals",
      Grammar(kLark, RuleChain("start: ", ": ", "NEXT", kDeep, "T")),
      "terminal references and groups nested more than 128 deep");
  add("lark: chain of 10,000 wrapping terminals",
      Grammar(kLark, RuleChain("start: ", ": ", "\"x\" NEXT | \"z\"", kDeep, "T")),
      "terminal references and groups nested more than 128 deep");
  add("lark: chain of 10,000 rules",
      Grammar(kLark, RuleChain("start: ", ": ", "\"x\" NEXT", kDeep)));
  add("lark: 1 MB terminal", Grammar(kLark, "start: T\nT: " + Repeat("\"a\" ", kFlatBytes / 4)));
  add("lark: 1 MB rule", Grammar(kLark, "start: " + Repeat("\"a\" ", kFlatBytes / 4)));
  add("lark: regex groups 10,000 deep",
      Grammar(kLark, "start: /" + Repeat("(", kDeep) + "a" + Repeat(")", kDeep) + "/"),
      "max_recursion_depth");
  // ---- Structural tags. ----
  add("structural tag: sequences 10,000 deep", client::StructuralTagSpec([] {
        std::string s = R"({"format":)";
        s += Repeat(R"({"type":"sequence","elements":[)", kDeep);
        s += R"({"type":"const_string","value":"a"})";
        return s + Repeat("]}", kDeep) + "}";
      }()),
      "max_recursion_depth");
  add("structural tag: 1 MB sequence", client::StructuralTagSpec([] {
        std::string s = R"({"format":{"type":"sequence","elements":[)";
        while (s.size() < kFlatBytes) s += R"({"type":"const_string","value":"a"},)";
        return s + R"({"type":"const_string","value":"b"}]}})";
      }()));
  add("structural tag: schema 10,000 deep inside",
      client::StructuralTagSpec(R"({"format":{"type":"json_schema","json_schema":)" +
                                Repeat(R"({"items":)", kDeep) + "true" + Repeat("}", kDeep) + "}}"),
      "max_recursion_depth");
  // ---- Choices. ----
  add("choices: one of 1 MB", client::ChoicesSpec({Repeat("ab", kFlatBytes / 2)}));
  add("choices: 100,000 of them", client::ChoicesSpec([] {
        std::vector<std::string> many;
        for (int i = 0; i < 100'000; ++i) many.push_back(absl::StrCat("c", i));
        return many;
      }()));
  add("choices: 10,000 brackets", client::ChoicesSpec({Repeat("[", kDeep) + Repeat("]", kDeep)}));
  return probes;
}

// Each string field of a CompileRequest (and the tool-call spec's), set to
// text with invalid UTF-8: the field the server must name.
std::vector<std::pair<std::string, std::function<void(v1::CompileRequest&)>>> Utf8Probes() {
  const std::string bad = "ok\xff\xfe\xc3(";
  return {
      {"tokenizer_id", [bad](v1::CompileRequest& r) { r.set_tokenizer_id(bad); }},
      {"json_schema", [bad](v1::CompileRequest& r) { r.mutable_spec()->set_json_schema(bad); }},
      {"regex", [bad](v1::CompileRequest& r) { r.mutable_spec()->set_regex(bad); }},
      {"text",
       [bad](v1::CompileRequest& r) {
         r.mutable_spec()->mutable_grammar()->set_dialect(v1::GRAMMAR_DIALECT_GBNF);
         r.mutable_spec()->mutable_grammar()->set_text(bad);
       }},
      {"start_rule",
       [bad](v1::CompileRequest& r) {
         r.mutable_spec()->mutable_grammar()->set_dialect(v1::GRAMMAR_DIALECT_GBNF);
         r.mutable_spec()->mutable_grammar()->set_text("root ::= \"a\"");
         r.mutable_spec()->mutable_grammar()->set_start_rule(bad);
       }},
      {"choices",
       [bad](v1::CompileRequest& r) {
         r.mutable_spec()->mutable_choices()->add_choices("fine");
         r.mutable_spec()->mutable_choices()->add_choices(bad);
       }},
      {"structural_tag",
       [bad](v1::CompileRequest& r) { r.mutable_spec()->set_structural_tag(bad); }},
      {"name",
       [bad](v1::CompileRequest& r) {
         v1::ToolCallsSpec* tools = r.mutable_spec()->mutable_tool_calls();
         tools->set_format(v1::TOOL_CALL_FORMAT_QWEN3);
         tools->add_tools()->set_name(bad);
       }},
      {"parameters_json_schema",
       [bad](v1::CompileRequest& r) {
         v1::ToolCallsSpec* tools = r.mutable_spec()->mutable_tool_calls();
         tools->set_format(v1::TOOL_CALL_FORMAT_QWEN3);
         v1::Tool* tool = tools->add_tools();
         tool->set_name("f");
         tool->set_parameters_json_schema(bad);
       }},
      {"reasoning_end_marker",
       [bad](v1::CompileRequest& r) {
         r.mutable_spec()->set_regex("a");
         r.mutable_options()->set_reasoning_end_marker(bad);
       }},
      {"default_dialect",
       [bad](v1::CompileRequest& r) {
         r.mutable_spec()->set_json_schema("{}");
         r.mutable_options()->set_default_dialect(bad);
       }},
  };
}

// Whether `s` is valid UTF-8 (gRPC carries status messages as text).
bool IsUtf8(absl::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xe  ? 3
                     : (c >> 3) == 0x1e ? 4
                                        : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// A server failure rather than an answer about the input.
bool IsServerFailure(absl::StatusCode code) {
  return code == absl::StatusCode::kInternal || code == absl::StatusCode::kUnknown ||
         code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kCancelled;
}

// One sequence on its own stream, stepped (no tokens) over and over from
// Start to Stop: every mask must be the first one.
class Victim {
 public:
  Victim(const std::string& address, const std::string& handle)
      : stub_(v1::Maskd::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))),
        handle_(handle) {}

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }
  int steps() const { return steps_.load(); }
  // Stops the loop; whether every step gave the first mask, and the stream
  // ended OK.
  std::string Stop() {
    stop_ = true;
    thread_.join();
    return failure_;
  }

 private:
  void Run() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(30));
    auto stream = stub_->Session(&context);
    v1::StepRequest open;
    open.add_ops()->set_sequence_id(1);
    open.mutable_ops(0)->mutable_open()->set_handle(handle_);
    v1::StepResponse response;
    if (!stream->Write(open) || !stream->Read(&response) || response.results(0).has_error()) {
      failure_ = "the victim's open failed";
      return;
    }
    const std::string first = response.results(0).mask().SerializeAsString();
    v1::StepRequest step;
    step.add_ops()->set_sequence_id(1);
    step.mutable_ops(0)->mutable_advance();
    while (!stop_.load()) {
      if (!stream->Write(step) || !stream->Read(&response)) {
        failure_ = absl::StrCat("the victim's stream broke after ", steps_.load(), " steps");
        break;
      }
      if (response.results(0).has_error() ||
          response.results(0).mask().SerializeAsString() != first) {
        failure_ = absl::StrCat("step ", steps_.load(),
                                " gave another answer: ", response.results(0).DebugString());
        break;
      }
      ++steps_;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    stream->WritesDone();
    const grpc::Status finished = stream->Finish();
    if (failure_.empty() && !finished.ok()) {
      failure_ = absl::StrCat("the victim's stream ended ", finished.error_message());
    }
  }

  std::unique_ptr<v1::Maskd::Stub> stub_;
  std::string handle_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> steps_{0};
  std::string failure_;
};

class AttackerProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> process =
        StartMaskd({"--allow_register_tokenizer", kCompileTimeLimitFlag});
    ASSERT_TRUE(process.ok()) << process.status();
    process_ = *std::move(process);
    client_ = ClientOf(*process_);
    absl::StatusOr<CompiledSchema> victim = CompileForLlama3(*client_, R"({"type":"integer"})");
    ASSERT_TRUE(victim.ok()) << victim.status();
    tokenizer_id_ = victim->tokenizer_id;
    victim_ = std::make_unique<Victim>(process_->grpc_address(), victim->handle);
    victim_->Start();
  }

  // The victim stepped since `before` (it is not stalled behind the probe)
  // and the server still answers health checks.
  void ExpectServerAndVictimFine(const std::string& after, int before) {
    for (int i = 0; i < 3000 && victim_->steps() <= before; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GT(victim_->steps(), before) << "the victim stalled after " << after;
    absl::StatusOr<client::HealthState> health = client_->CheckHealth();
    ASSERT_TRUE(health.ok()) << after << ": " << health.status() << "\nlog:\n" << process_->Log();
    EXPECT_EQ(*health, client::HealthState::kServing) << after;
  }

  void TearDown() override {
    if (victim_ != nullptr) {
      EXPECT_EQ(victim_->Stop(), "");
    }
    if (process_ == nullptr) return;
    EXPECT_TRUE(CompileForLlama3(*client_, R"({"type":"boolean"})").ok());
    absl::StatusOr<int> exit_code = process_->Stop(SIGTERM, std::chrono::seconds(60));
    ASSERT_TRUE(exit_code.ok()) << exit_code.status() << "\nlog:\n" << process_->Log();
    EXPECT_EQ(*exit_code, 0) << process_->Log();
  }

  std::unique_ptr<testing::MaskdProcess> process_;
  std::unique_ptr<client::MaskdClient> client_;
  std::string tokenizer_id_;
  std::unique_ptr<Victim> victim_;
};

TEST_F(AttackerProbeTest, DeepAndFlatSpecsOfEveryKindGetAnswers) {
  // The probes that must be refused go first: they are refused as they are
  // read, before flat probes past their time limit (still compiling in the
  // background, up to --compile_time_limit) can keep them queued.
  std::vector<Probe> probes = SpecProbes();
  std::stable_partition(probes.begin(), probes.end(),
                        [](const Probe& p) { return !p.refused_with.empty(); });
  for (const Probe& probe : probes) {
    SCOPED_TRACE(probe.name);
    const int before = victim_->steps();
    absl::StatusOr<client::CompileResult> compiled = client_->Compile(tokenizer_id_, probe.spec);
    const absl::Status status = compiled.status();
    EXPECT_FALSE(IsServerFailure(status.code())) << status << "\nlog:\n" << process_->Log();
    if (!status.ok()) {
      EXPECT_FALSE(status.message().empty());
      EXPECT_LE(status.message().size(), 16u << 10) << "messages are bounded";
      EXPECT_TRUE(IsUtf8(status.message()));
    }
    if (!probe.refused_with.empty()) {
      EXPECT_FALSE(status.ok()) << "compiled";
      EXPECT_THAT(status.message(), HasSubstr(probe.refused_with));
    }
    std::cout << probe.name << ": " << (status.ok() ? "compiled" : status.ToString().substr(0, 200))
              << "\n";
    ExpectServerAndVictimFine(probe.name, before);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST_F(AttackerProbeTest, InvalidUtf8InEveryStringFieldIsNamed) {
  for (const auto& [field, set] : Utf8Probes()) {
    SCOPED_TRACE(field);
    v1::CompileRequest request;
    request.set_tokenizer_id(tokenizer_id_);
    set(request);
    absl::StatusOr<client::CompileResult> compiled = client_->Compile(request);
    ASSERT_FALSE(compiled.ok());
    EXPECT_EQ(compiled.status().code(), absl::StatusCode::kInvalidArgument) << compiled.status();
    EXPECT_THAT(compiled.status().message(), AnyOf(HasSubstr("UTF-8"), HasSubstr("utf-8")));
    EXPECT_THAT(compiled.status().message(), HasSubstr(field));
    EXPECT_TRUE(IsUtf8(compiled.status().message()));
  }
  // The same in an inline open and in a handle: that op fails, the stream
  // goes on.
  auto stub = v1::Maskd::NewStub(
      grpc::CreateChannel(process_->grpc_address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(2));
  auto stream = stub->Session(&context);
  v1::StepRequest request;
  v1::OpenSequence* inline_open = request.add_ops()->mutable_open();
  request.mutable_ops(0)->set_sequence_id(1);
  inline_open->mutable_compile()->set_tokenizer_id(tokenizer_id_);
  inline_open->mutable_compile()->mutable_spec()->set_regex("a\xff");
  v1::StepResponse response;
  ASSERT_TRUE(stream->Write(request));
  const bool read = stream->Read(&response);
  stream->WritesDone();
  const grpc::Status finished = stream->Finish();
  // A request that does not parse ends its stream with INVALID_ARGUMENT
  // naming the field (finding 1.6): nothing else may happen.
  if (read) {
    ASSERT_EQ(response.results_size(), 1);
    EXPECT_EQ(response.results(0).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(response.results(0).error().message(), HasSubstr("UTF-8"));
  } else {
    EXPECT_EQ(finished.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(finished.error_message(), HasSubstr("regex"));
    EXPECT_TRUE(IsUtf8(finished.error_message()));
  }
  ExpectServerAndVictimFine("invalid UTF-8 in an inline open", victim_->steps());
}

TEST_F(AttackerProbeTest, HostileTokenizerJsonGetsAnswers) {
  struct TokenizerProbe {
    std::string name;
    std::string tokenizer_json;
  };
  const std::vector<TokenizerProbe> probes = {
      {"10,000-deep arrays", R"({"model":{"type":"BPE","vocab":{},"merges":)" + Repeat("[", kDeep) +
                                 Repeat("]", kDeep) + "}}"},
      {"10,000-deep objects",
       R"({"model":)" + Repeat(R"({"model":)", kDeep) + "{}" + Repeat("}", kDeep) + "}"},
      {"10,000-deep normalizers", R"({"normalizer":)" +
                                      Repeat(R"({"type":"Sequence","normalizers":[)", kDeep) +
                                      Repeat("]}", kDeep) + R"(,"model":{"type":"BPE"}})"},
      {"10,000-deep pre-tokenizers", R"({"pre_tokenizer":)" +
                                         Repeat(R"({"type":"Sequence","pretokenizers":[)", kDeep) +
                                         Repeat("]}", kDeep) + R"(,"model":{"type":"BPE"}})"},
      {"1 MB vocabulary of junk",
       [] {
         std::string s = R"({"model":{"type":"BPE","vocab":{)";
         for (size_t i = 0; s.size() < kFlatBytes; ++i)
           absl::StrAppend(&s, "\"t", i, "\":", i, ",");
         return s + R"("end":0},"merges":[["t1","t2"],["q","r"]]}})";
       }()},
      {"1 MB string", R"({"model":{"type":")" + Repeat("B", kFlatBytes) + "\"}}"},
      {"invalid UTF-8 in a token", R"({"model":{"type":"BPE","vocab":{"a":0,")"
                                   "\xff\xfe"
                                   R"(":1},"merges":[]}})"},
      {"not JSON", Repeat("{", kFlatBytes)},
  };
  for (const TokenizerProbe& probe : probes) {
    SCOPED_TRACE(probe.name);
    const int before = victim_->steps();
    v1::RegisterTokenizerRequest request;
    request.mutable_files()->set_tokenizer_json(probe.tokenizer_json);
    request.set_name("probe");
    absl::StatusOr<v1::RegisterTokenizerResponse> registered = client_->RegisterTokenizer(request);
    ASSERT_FALSE(registered.ok()) << "registered";
    EXPECT_FALSE(IsServerFailure(registered.status().code())) << registered.status();
    EXPECT_FALSE(registered.status().message().empty());
    EXPECT_TRUE(IsUtf8(registered.status().message()));
    std::cout << probe.name << ": " << registered.status().ToString().substr(0, 200) << "\n";
    ExpectServerAndVictimFine(probe.name, before);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Invalid UTF-8 in the name and the preloaded name.
  v1::RegisterTokenizerRequest by_name;
  by_name.set_preloaded_name("llama3\xff");
  absl::StatusOr<v1::RegisterTokenizerResponse> registered = client_->RegisterTokenizer(by_name);
  ASSERT_FALSE(registered.ok());
  EXPECT_EQ(registered.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(registered.status().message(), HasSubstr("preloaded_name"));
  absl::StatusOr<bool> unregistered = client_->UnregisterTokenizer("id\xff");
  ASSERT_FALSE(unregistered.ok());
  EXPECT_EQ(unregistered.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unregistered.status().message(), HasSubstr("tokenizer_id"));
  ExpectServerAndVictimFine("invalid UTF-8 in tokenizer names", victim_->steps());
}

// A flood of real tokenizer uploads (Llama-3's 9 MB tokenizer.json, each
// parsed on the upload pool) at once: beyond the 8 the server loads at once
// they are RESOURCE_EXHAUSTED saying so, the victim's stream goes on, health
// answers, and once the flood is over an upload is served again.
TEST_F(AttackerProbeTest, TokenizerUploadFloodIsBoundedAndTheVictimGoesOn) {
  std::ifstream file(testing::TokenizerDir("llama3") + "/tokenizer.json", std::ios::binary);
  ASSERT_TRUE(file) << "no Llama-3 tokenizer.json under " << testing::TokenizerDir("llama3");
  std::stringstream bytes;
  bytes << file.rdbuf();
  const std::string tokenizer_json = bytes.str();
  ASSERT_GT(tokenizer_json.size(), size_t{1} << 20);

  constexpr int kUploads = 16;             // twice the server's 8 at once
  constexpr uint32_t kLlama3Eos = 128001;  // the preloaded Llama-3's (tokenizer_config.json)
  int refused_for_load = 0;
  // A round where the first uploads finished loading before the last ones
  // arrived sees no refusal: up to 3 rounds (each upload takes ~1 s to parse).
  for (int round = 0; round < 3 && refused_for_load == 0; ++round) {
    const int before = victim_->steps();
    std::vector<absl::Status> answers(kUploads);
    std::vector<std::thread> uploaders;
    for (int i = 0; i < kUploads; ++i) {
      uploaders.emplace_back([&, i] {
        std::unique_ptr<client::MaskdClient> client = ClientOf(*process_);
        v1::RegisterTokenizerRequest request;
        request.mutable_files()->set_tokenizer_json(tokenizer_json);
        request.add_eos_token_ids(kLlama3Eos);  // as preloaded: the same tokenizer
        request.set_name(absl::StrCat("flood-", round, "-", i));
        answers[i] = client->RegisterTokenizer(request).status();
      });
    }
    for (std::thread& t : uploaders) t.join();
    for (int i = 0; i < kUploads; ++i) {
      SCOPED_TRACE(i);
      const absl::Status& answer = answers[i];
      if (answer.ok()) continue;
      // The other refusal a flood may meet: the tenant's tokenizer quota.
      ASSERT_EQ(answer.code(), absl::StatusCode::kResourceExhausted) << answer;
      if (absl::StrContains(answer.message(), "at most 8 uploaded tokenizers at once")) {
        ++refused_for_load;
      } else {
        EXPECT_THAT(answer.message(), HasSubstr("max_tokenizers_per_tenant")) << answer;
      }
    }
    std::cout << "round " << round << ": " << refused_for_load << " of " << kUploads
              << " uploads refused for the loads in flight\n";
    ExpectServerAndVictimFine("an upload flood", before);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(refused_for_load, 0) << "no upload was refused for the loads in flight";
  // The slots came back: a lone upload (the same content, so within the
  // tenant's quota: it joins the preloaded Llama-3) is served.
  v1::RegisterTokenizerRequest lone;
  lone.mutable_files()->set_tokenizer_json(tokenizer_json);
  lone.add_eos_token_ids(kLlama3Eos);
  lone.set_name("after-the-flood");
  absl::StatusOr<v1::RegisterTokenizerResponse> registered = client_->RegisterTokenizer(lone);
  ASSERT_TRUE(registered.ok()) << registered.status();
  EXPECT_EQ(registered->tokenizer().tokenizer_id(), tokenizer_id_);
}

}  // namespace
}  // namespace maskd::e2e
