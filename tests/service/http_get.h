// A minimal HTTP GET for tests that scrape maskd's /metrics.
#ifndef MASKD_TESTS_SERVICE_HTTP_GET_H_
#define MASKD_TESTS_SERVICE_HTTP_GET_H_

#include <string>

namespace maskd::testing {

// GET http://ADDRESS/PATH with a raw socket (HTTP/1.0: the server closes when
// done). Returns the whole response, headers included; empty on failure.
std::string HttpGet(const std::string& address, const std::string& path);

}  // namespace maskd::testing

#endif  // MASKD_TESTS_SERVICE_HTTP_GET_H_
