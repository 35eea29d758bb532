#include "clients/cpp/session_stream.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "clients/cpp/status.h"

namespace maskd::client {

SessionStream::SessionStream(v1::Maskd::Stub* stub, absl::Time deadline,
                             uint32_t wanted_dictionary_slots)
    : wanted_dictionary_slots_(wanted_dictionary_slots) {
  if (deadline != absl::InfiniteFuture()) context_.set_deadline(absl::ToChronoTime(deadline));
  stream_ = stub->Session(&context_);
}

SessionStream::~SessionStream() {
  if (!finished_) {
    context_.TryCancel();
    const grpc::Status ignored = stream_->Finish();  // a cancelled stream's status says nothing
    (void)ignored;
  }
}

absl::Status SessionStream::Fail(const std::string& what) {
  finished_ = true;
  finish_status_ = FromGrpcStatus(stream_->Finish());
  // A clean end without an answer is still a failure of this step.
  broken_ = finish_status_.ok()
                ? absl::UnavailableError(absl::StrCat(what, ": the server ended the stream"))
                : finish_status_;
  return broken_;
}

absl::Status SessionStream::ProtocolFailure(absl::Status why) {
  context_.TryCancel();
  Fail("protocol failure").IgnoreError();
  broken_ = std::move(why);
  return broken_;
}

absl::Status SessionStream::ApplyDictionary(
    const v1::StepResponse& response, std::vector<std::shared_ptr<const TokenMask>>* resolved) {
  resolved->assign(response.results_size(), nullptr);
  for (int i = 0; i < response.results_size(); ++i) {
    const v1::SequenceResult& result = response.results(i);
    if (!result.has_mask()) continue;
    const v1::Mask& mask = result.mask();
    const bool is_ref = mask.encoding_case() == v1::Mask::kDictionaryRef;
    if (!is_ref && !mask.has_dictionary_store()) continue;
    const uint32_t slot = is_ref ? mask.dictionary_ref() : mask.dictionary_store();
    const std::string where =
        absl::StrCat("request ", response.request_id(), " result ", i, " (sequence ",
                     result.sequence_id(), "): mask dictionary slot ", slot);
    if (slot >= dictionary_.size()) {
      return absl::InternalError(
          absl::StrCat(where, " is out of range (", dictionary_.size(), " slots granted)"));
    }
    if (is_ref) {
      if (mask.has_dictionary_store()) {
        return absl::InternalError(absl::StrCat(where, ": a dictionary_ref with a store"));
      }
      const std::shared_ptr<const TokenMask>& held = dictionary_[slot];
      if (held == nullptr) return absl::InternalError(absl::StrCat(where, " is empty"));
      if (held->vocab_size() != mask.vocab_size() ||
          held->allowed_count() != mask.allowed_count()) {
        return absl::InternalError(absl::StrCat(where, " holds a mask of vocab_size ",
                                                held->vocab_size(), " allowing ",
                                                held->allowed_count(), " ids, the reference says ",
                                                mask.vocab_size(), " and ", mask.allowed_count()));
      }
      (*resolved)[i] = held;
      continue;
    }
    absl::StatusOr<TokenMask> decoded = TokenMask::Decode(mask);
    if (!decoded.ok()) {
      return absl::InternalError(
          absl::StrCat(where, ": the mask to store is malformed: ", decoded.status().message()));
    }
    dictionary_[slot] = std::make_shared<const TokenMask>(*std::move(decoded));
    (*resolved)[i] = dictionary_[slot];
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::StepResponse> SessionStream::SendResolving(
    v1::StepRequest request, std::vector<std::shared_ptr<const TokenMask>>* resolved) {
  if (!broken_.ok()) return broken_;
  if (finished_) return absl::FailedPreconditionError("the session stream was finished");

  const uint64_t request_id = next_request_id_++;
  const bool first = request_id == 1;
  request.set_request_id(request_id);
  if (first && wanted_dictionary_slots_ > 0) {
    request.mutable_session_options()->set_mask_dictionary_slots(wanted_dictionary_slots_);
  }
  last_request_bytes_ = request.ByteSizeLong();
  if (!stream_->Write(request)) return Fail("sending a step");
  v1::StepResponse response;
  if (!stream_->Read(&response)) return Fail("reading a step response");
  last_response_bytes_ = response.ByteSizeLong();
  if (response.request_id() != request_id) {
    context_.TryCancel();
    Fail("response out of order").IgnoreError();
    broken_ =
        absl::InternalError(absl::StrCat("the server answered request ", response.request_id(),
                                         " while ", request_id, " was expected"));
    return broken_;
  }
  if (response.results_size() != request.ops_size()) {
    context_.TryCancel();
    Fail("wrong result count").IgnoreError();
    broken_ = absl::InternalError(absl::StrCat("request ", request_id, " had ", request.ops_size(),
                                               " ops but the response has ",
                                               response.results_size(), " results"));
    return broken_;
  }
  if (first) {
    const uint32_t granted = response.session_grant().mask_dictionary_slots();
    if (granted > wanted_dictionary_slots_) {
      return ProtocolFailure(absl::InternalError(
          absl::StrCat("the server granted ", granted, " mask dictionary slots; ",
                       wanted_dictionary_slots_, " were asked for")));
    }
    dictionary_.assign(granted, nullptr);
  }
  if (absl::Status s = ApplyDictionary(response, resolved); !s.ok()) {
    return ProtocolFailure(std::move(s));
  }
  return response;
}

absl::Status SessionStream::Finish() {
  if (finished_) return finish_status_;
  finished_ = true;
  stream_->WritesDone();
  // Drain responses the server may still send (none in normal use: every
  // request was answered before Step returned).
  v1::StepResponse ignored;
  while (stream_->Read(&ignored)) {
  }
  finish_status_ = FromGrpcStatus(stream_->Finish());
  return finish_status_;
}

}  // namespace maskd::client
