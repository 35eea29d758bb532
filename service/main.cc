// maskd: constrained decoding as a service. Parses flags, starts the server,
// reloads credentials on SIGHUP, and on SIGTERM/SIGINT drains it and exits 0.
#include <pthread.h>
#include <signal.h>

#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "service/flags_usage.h"
#include "service/log.h"
#include "service/memory_budget.h"
#include "service/security_flags.h"
#include "service/server.h"
#include "service/tokenizer_flags.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "gRPC address host:port (port 0 picks a free port, the log says which), or "
          "unix:///PATH for a Unix socket (sidecar mode).");
ABSL_FLAG(std::string, unix_socket_mode, "0660",
          "Octal permission bits of the Unix socket (--listen=unix://...): connecting needs "
          "write access, so 0660 lets maskd's group in, 0666 every user who can reach the "
          "socket's directory (a pod's shared emptyDir).");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "Prometheus /metrics address host:port; port 0 picks a free port; empty disables.");
ABSL_FLAG(std::vector<std::string>, tokenizer, {},
          "Tokenizers to preload: comma list of name=DIR or name (DIR = "
          "${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tokenizers/name); may be repeated.");
ABSL_FLAG(int, threads, 0,
          "Threads computing Session steps (a request's sequences run in parallel on them); "
          "0: one per core.");
ABSL_FLAG(int, grpc_threads, 64, "Most gRPC threads for unary calls (Session streams hold none).");
ABSL_FLAG(int, compile_threads, 0, "Threads running compiles; 0: one per core.");
ABSL_FLAG(int64_t, cache_bytes, int64_t{1} << 30,
          "Memory budget of the compiled-grammar cache, in bytes (least recently used first out).");
ABSL_FLAG(int64_t, max_cache_bytes_per_tenant, 0,
          "Most bytes of cached grammars charged to one tenant (the tenant that last compiled "
          "each); past it the tenant's own least recently used grammars no sequence uses are "
          "evicted after each of its compiles, never another tenant's. 0: no bound (a full "
          "cache still evicts first the grammars of tenants over their fair share).");
ABSL_FLAG(absl::Duration, cache_error_ttl, absl::Seconds(5),
          "How long a failed compile's error answers identical requests without recompiling.");
ABSL_FLAG(absl::Duration, compile_time_limit, absl::Seconds(10),
          "Longest a caller waits for one compile (a request may ask for less): past it the "
          "answer is DEADLINE_EXCEEDED and the compile finishes in the background (a compile "
          "every caller left, by deadline or cancellation, stops).");
ABSL_FLAG(int64_t, max_spec_bytes, int64_t{1} << 20,
          "Largest spec (schema, regex, grammar text, or all choices) accepted, in bytes.");
ABSL_FLAG(int, max_sequences_per_stream, 4096, "Most open sequences on one Session stream.");
ABSL_FLAG(int, max_ops_per_request, 1024, "Most sequence ops in one StepRequest.");
ABSL_FLAG(int, max_rollback_tokens, 1024, "Largest OpenSequence.max_rollback_tokens accepted.");
ABSL_FLAG(int, max_mask_dictionary_slots, 1024,
          "Most mask dictionary slots granted to one Session stream (a client asking for more "
          "gets this many); each holds one mask (16 KiB for a 128k vocabulary); 0: no "
          "dictionary.");
ABSL_FLAG(int, inline_step_ops, 1,
          "A StepRequest with at most this many ops and no open runs on the gRPC thread that "
          "received it instead of the step pool (saves two thread wake-ups); 0: never.");
ABSL_FLAG(absl::Duration, session_idle_timeout, absl::Minutes(10),
          "A Session stream with no request for this long is ended (DEADLINE_EXCEEDED); 0: never.");
ABSL_FLAG(int, max_message_bytes, 64 << 20,
          "Largest gRPC message accepted or sent, in bytes (tokenizer uploads are ~10 MiB).");
ABSL_FLAG(int64_t, max_tokenizer_bytes, int64_t{64} << 20,
          "Largest tokenizer.json accepted by RegisterTokenizer, in bytes.");
ABSL_FLAG(int, max_tokenizers, 32, "Most distinct tokenizers held at once.");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(5),
          "On SIGTERM/SIGINT, how long in-flight calls may finish before being cancelled.");
ABSL_FLAG(absl::Duration, shutdown_compile_grace, absl::Seconds(5),
          "After the drain, how long cancelled compiles may take to stop (each stops at the "
          "engine's next check) before maskd exits without waiting for them.");

// Admission and abuse limits (one client must not hurt another).
ABSL_FLAG(int, max_queued_compiles, 256,
          "Most compiles queued or running at once; a call that would start one more fails "
          "with RESOURCE_EXHAUSTED (cache hits and joins of a compile in flight always pass).");
ABSL_FLAG(int, max_queued_compiles_per_tenant, 64,
          "Most compiles queued or running at once for one tenant (RESOURCE_EXHAUSTED beyond).");
ABSL_FLAG(int, max_streams_per_tenant, 1024,
          "Most Session streams one tenant (bearer token's tenant; \"default\" without tokens) "
          "holds open at once; a new stream beyond ends at once with RESOURCE_EXHAUSTED naming "
          "the tenant, other tenants unaffected.");
ABSL_FLAG(int, max_sequences_per_tenant, 65536,
          "Most sequences one tenant holds open over all its streams; an open beyond fails "
          "(that op, RESOURCE_EXHAUSTED naming the tenant), other tenants unaffected.");
ABSL_FLAG(int, max_tokens_per_op, 65536,
          "Most tokens plus draft tokens in one AdvanceSequence (RESOURCE_EXHAUSTED on that "
          "sequence beyond); 0: no limit.");
ABSL_FLAG(int, metrics_threads, 4,
          "Threads serving /metrics (a scraper that sends half a request holds one for at most "
          "--metrics_request_timeout).");
ABSL_FLAG(absl::Duration, metrics_request_timeout, absl::Seconds(5),
          "Longest /metrics waits for a scraper's request or for it to take the response.");
ABSL_FLAG(absl::Duration, memory_release_interval, absl::Seconds(1),
          "After a Session stream ends, return freed memory to the OS (malloc_trim) at most "
          "this often; 0: never.");

ABSL_FLAG(int64_t, memory_budget_bytes, -1,
          "Process-wide memory budget in bytes that sessions, sequences (parser state), mask "
          "dictionaries, compiles in flight and the compile cache draw on (the cache gives way "
          "first); an op or compile that would pass it fails with RESOURCE_EXHAUSTED. -1: 3/5 "
          "of the cgroup memory limit (v2 memory.max, v1 memory.limit_in_bytes), else of "
          "physical memory; 0: no limit.");
ABSL_FLAG(int, max_parser_depth, 262144,
          "Most lexemes one sequence's parser may hold (one Earley set each, ~100-300 bytes); a "
          "token past it fails with RESOURCE_EXHAUSTED; 0: no limit.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("maskd: constrained decoding as a gRPC service.");
  if (maskd::WantsHelp(argc, argv)) {
    std::cout << maskd::FlagsUsage(std::string(absl::ProgramUsageMessage()), "/service/");
    return EXIT_SUCCESS;
  }
  // absl keeps only the last --tokenizer; collect every occurrence first.
  const std::vector<std::string> tokenizer_values =
      maskd::CollectFlagValues(argc, argv, "tokenizer");
  absl::ParseCommandLine(argc, argv);

  // Block the stop signals in every thread (gRPC's and civetweb's threads
  // inherit this mask) so only the sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  // SIGHUP reloads the token file and TLS files instead of stopping.
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  absl::StatusOr<std::vector<maskd::TokenizerSource>> preload =
      maskd::ParseTokenizerFlags(tokenizer_values, maskd::DefaultTokenizerCacheDir());
  if (!preload.ok()) {
    MASKD_LOG(ERROR) << preload.status().message();
    return EXIT_FAILURE;
  }
  if (absl::GetFlag(FLAGS_grpc_threads) < 2 || absl::GetFlag(FLAGS_max_message_bytes) < 1024 ||
      absl::GetFlag(FLAGS_max_tokenizer_bytes) < 1 || absl::GetFlag(FLAGS_max_tokenizers) < 1 ||
      absl::GetFlag(FLAGS_threads) < 0 || absl::GetFlag(FLAGS_compile_threads) < 0 ||
      absl::GetFlag(FLAGS_cache_bytes) < 1 || absl::GetFlag(FLAGS_max_spec_bytes) < 1 ||
      absl::GetFlag(FLAGS_max_sequences_per_stream) < 1 ||
      absl::GetFlag(FLAGS_max_ops_per_request) < 1 ||
      absl::GetFlag(FLAGS_max_rollback_tokens) < 0 ||
      absl::GetFlag(FLAGS_max_mask_dictionary_slots) < 0 ||
      absl::GetFlag(FLAGS_inline_step_ops) < 0 ||
      absl::GetFlag(FLAGS_compile_time_limit) <= absl::ZeroDuration() ||
      absl::GetFlag(FLAGS_max_queued_compiles) < 1 ||
      absl::GetFlag(FLAGS_max_queued_compiles_per_tenant) < 1 ||
      absl::GetFlag(FLAGS_max_streams_per_tenant) < 1 ||
      absl::GetFlag(FLAGS_max_sequences_per_tenant) < 1 ||
      absl::GetFlag(FLAGS_max_tokens_per_op) < 0 || absl::GetFlag(FLAGS_metrics_threads) < 1 ||
      absl::GetFlag(FLAGS_memory_budget_bytes) < -1 || absl::GetFlag(FLAGS_max_parser_depth) < 0 ||
      absl::GetFlag(FLAGS_metrics_request_timeout) < absl::Milliseconds(1)) {
    MASKD_LOG(ERROR) << "--grpc_threads must be >= 2, --max_message_bytes >= 1024, "
                        "--threads, --compile_threads, --max_rollback_tokens, "
                        "--max_mask_dictionary_slots and --inline_step_ops >= 0, "
                        "--max_tokenizer_bytes, --max_tokenizers, --cache_bytes, --max_spec_bytes, "
                        "--max_sequences_per_stream and --max_ops_per_request >= 1, "
                        "--compile_time_limit > 0, --max_queued_compiles, "
                        "--max_queued_compiles_per_tenant, --max_streams_per_tenant, "
                        "--max_sequences_per_tenant and --metrics_threads >= 1, "
                        "--max_tokens_per_op and --max_parser_depth >= 0, "
                        "--memory_budget_bytes >= -1, --metrics_request_timeout >= 1ms";
    return EXIT_FAILURE;
  }

  // TLS, tokens, tokenizer registration: service/security_flags.cc.
  absl::StatusOr<maskd::SecurityOptions> security = maskd::SecurityOptionsFromFlags();
  if (!security.ok()) {
    MASKD_LOG(ERROR) << security.status().message();
    return EXIT_FAILURE;
  }

  maskd::ServerOptions options;
  options.security = *std::move(security);
  options.listen = absl::GetFlag(FLAGS_listen);
  {
    const std::string mode = absl::GetFlag(FLAGS_unix_socket_mode);
    char* end = nullptr;
    const unsigned long bits = std::strtoul(mode.c_str(), &end, 8);
    if (mode.empty() || *end != '\0' || bits > 0777) {
      MASKD_LOG(ERROR) << "--unix_socket_mode must be octal permission bits such as 0660, not '"
                       << mode << "'";
      return EXIT_FAILURE;
    }
    options.unix_socket_mode = static_cast<unsigned>(bits);
  }
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.grpc_threads = absl::GetFlag(FLAGS_grpc_threads);
  options.step_threads = static_cast<size_t>(absl::GetFlag(FLAGS_threads));
  options.cache.compile_threads = static_cast<size_t>(absl::GetFlag(FLAGS_compile_threads));
  options.cache.max_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_cache_bytes));
  options.cache.error_ttl = absl::GetFlag(FLAGS_cache_error_ttl);
  {
    const int64_t per_tenant = absl::GetFlag(FLAGS_max_cache_bytes_per_tenant);
    options.cache.max_bytes_per_tenant = per_tenant < 0 ? 0 : static_cast<size_t>(per_tenant);
  }
  options.compile_limits.max_spec_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_max_spec_bytes));
  options.compile_limits.compile_time_limit = absl::GetFlag(FLAGS_compile_time_limit);
  options.session_limits.max_sequences_per_stream =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_sequences_per_stream));
  options.session_limits.max_ops_per_request =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_ops_per_request));
  options.session_limits.max_rollback_tokens =
      static_cast<uint32_t>(absl::GetFlag(FLAGS_max_rollback_tokens));
  options.session_limits.max_mask_dictionary_slots =
      static_cast<uint32_t>(absl::GetFlag(FLAGS_max_mask_dictionary_slots));
  options.session_limits.max_inline_step_ops =
      static_cast<size_t>(absl::GetFlag(FLAGS_inline_step_ops));
  options.session_idle_timeout = absl::GetFlag(FLAGS_session_idle_timeout);
  options.cache.max_queued_compiles = static_cast<size_t>(absl::GetFlag(FLAGS_max_queued_compiles));
  options.cache.max_queued_compiles_per_tenant =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_queued_compiles_per_tenant));
  options.tenant_quotas.max_streams =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_streams_per_tenant));
  options.tenant_quotas.max_sequences =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_sequences_per_tenant));
  options.session_limits.max_tokens_per_op =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_tokens_per_op));
  options.metrics_threads = absl::GetFlag(FLAGS_metrics_threads);
  options.metrics_request_timeout = absl::GetFlag(FLAGS_metrics_request_timeout);
  options.memory_release_interval = absl::GetFlag(FLAGS_memory_release_interval);
  const int64_t budget = absl::GetFlag(FLAGS_memory_budget_bytes);
  options.memory_budget_bytes =
      budget < 0 ? maskd::DefaultMemoryBudgetBytes() : static_cast<size_t>(budget);
  options.session_limits.max_parser_depth =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_parser_depth));
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.preload = *std::move(preload);
  options.tokenizer_limits.max_tokenizer_json_bytes =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_tokenizer_bytes));
  options.tokenizer_limits.max_tokenizers =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_tokenizers));

  absl::StatusOr<std::unique_ptr<maskd::Server>> server = maskd::Server::Start(options);
  if (!server.ok()) {
    MASKD_LOG(ERROR) << server.status().message();
    return EXIT_FAILURE;
  }

  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) == 0 && signal_number == SIGHUP) {
    MASKD_LOG(INFO) << "received SIGHUP, reloading credentials";
    (*server)->ReloadCredentials();
  }
  MASKD_LOG(INFO) << "received " << (signal_number == SIGTERM ? "SIGTERM" : "SIGINT")
                  << ", draining";
  (*server)->Shutdown(absl::GetFlag(FLAGS_shutdown_grace));
  // The drain cancelled every compile, but a running one stops only at the
  // engine's next check, and the server's destructor joins the compile
  // threads: past the grace, exit without them (nothing of theirs is kept).
  std::mutex stopped_mu;
  std::condition_variable stopped_cv;
  bool stopped = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(stopped_mu);
    if (!stopped_cv.wait_for(
            lock, absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_shutdown_compile_grace)),
            [&] { return stopped; })) {
      MASKD_LOG(WARNING) << "compiles still running " << absl::GetFlag(FLAGS_shutdown_compile_grace)
                         << " after the drain (--shutdown_compile_grace); exiting without them";
      std::_Exit(EXIT_SUCCESS);
    }
  });
  server->reset();
  {
    std::lock_guard<std::mutex> lock(stopped_mu);
    stopped = true;
  }
  stopped_cv.notify_all();
  watchdog.join();
  MASKD_LOG(INFO) << "stopped";
  return EXIT_SUCCESS;
}
