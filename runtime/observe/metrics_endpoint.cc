#include "runtime/observe/metrics_endpoint.h"

#include <utility>

#include "runtime/observe/prometheus_text.h"

namespace cohort {

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const ListenAddress& address) {
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  MetricsEndpoint* self = endpoint.get();
  absl::StatusOr<std::unique_ptr<HttpEndpoint>> http = HttpEndpoint::Start(
      address, "metrics", [self](const HttpRequest& request) { return self->Answer(request); });
  if (!http.ok()) return http.status();
  endpoint->http_ = *std::move(http);
  return endpoint;
}

void MetricsEndpoint::Publish(std::string page) {
  std::lock_guard<std::mutex> lock(mutex_);
  page_ = std::move(page);
}

HttpReply MetricsEndpoint::Answer(const HttpRequest& request) {
  if (request.path != "/metrics") return HttpReply{404, "text/plain", "metrics are at /metrics\n"};
  std::lock_guard<std::mutex> lock(mutex_);
  return HttpReply{200, kPrometheusContentType, page_};
}

}  // namespace cohort
