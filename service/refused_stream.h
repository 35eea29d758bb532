// A Session stream refused before it starts (e.g. UNAUTHENTICATED): it
// ends at once with the given status and reads nothing.
#ifndef MASKD_SERVICE_REFUSED_STREAM_H_
#define MASKD_SERVICE_REFUSED_STREAM_H_

#include <utility>

#include "grpcpp/support/server_callback.h"
#include "maskd/v1/session.pb.h"

namespace maskd {

class RefusedStream final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // gRPC owns the reactor; it deletes itself in OnDone.
  explicit RefusedStream(const grpc::Status& status) { Finish(status); }

  void OnDone() override { delete this; }
};

}  // namespace maskd

#endif  // MASKD_SERVICE_REFUSED_STREAM_H_
