// MetricsEndpoint: serves GET /metrics over HTTP (an HttpEndpoint): the page a Prometheus server
// scrapes. The owner publishes the page (Publish) from its own thread, as often as it likes; the
// endpoint's thread answers each request with the latest page, so a scrape never touches the
// owner's state. Other paths get 404.
//
//   absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
//       MetricsEndpoint::Start("0.0.0.0", 9464);
//   (*endpoint)->Publish(page.Text());   // e.g. once a second, from the daemon's loop
//
// Thread-safety: Publish may be called from any thread.
#ifndef COHORT_RUNTIME_OBSERVE_METRICS_ENDPOINT_H_
#define COHORT_RUNTIME_OBSERVE_METRICS_ENDPOINT_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/observe/http_endpoint.h"

namespace cohort {

class MetricsEndpoint {
 public:
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const ListenAddress& address);
  // Listens on `host` (an IPv4 address; "0.0.0.0" for every interface) and `port` (0: any free
  // one). Errors as HttpEndpoint::Start's.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const std::string& host,
                                                                uint16_t port) {
    return Start(ListenAddress{host, port});
  }
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // The port listened on.
  uint16_t port() const { return http_->port(); }

  // The page served from now on (empty until the first Publish).
  void Publish(std::string page);

 private:
  MetricsEndpoint() = default;
  HttpReply Answer(const HttpRequest& request);

  std::mutex mutex_;
  std::string page_;  // guarded by mutex_
  std::unique_ptr<HttpEndpoint> http_;  // last: stopped before the page goes
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_METRICS_ENDPOINT_H_
