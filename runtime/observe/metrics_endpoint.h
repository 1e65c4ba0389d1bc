// MetricsEndpoint: serves GET /metrics over HTTP on a TCP port: the page a Prometheus server
// scrapes. The owner publishes the page (Publish) from its own thread, as often as it likes; the
// endpoint's thread answers each request with the latest page, so a scrape never touches the
// owner's state. Other paths get 404 and other methods 405. Connections are served one at a time
// and closed after each answer; a client that has not sent its request within 2 s is dropped.
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
#include <thread>

#include "absl/status/statusor.h"

namespace cohort {

// Where to listen, from "[HOST:]PORT" (the --metrics-address flags): HOST an IPv4 address,
// 0.0.0.0 (every interface) when absent; PORT from 0 to 65535. INVALID_ARGUMENT naming the form
// otherwise.
struct ListenAddress {
  std::string host;
  uint16_t port = 0;
};
absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& text);

class MetricsEndpoint {
 public:
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const ListenAddress& address) {
    return Start(address.host, address.port);
  }
  // Listens on `host` (an IPv4 address; "0.0.0.0" for every interface) and `port` (0: any free
  // one). INVALID_ARGUMENT for a host that is not an IPv4 address; UNAVAILABLE when the port
  // cannot be bound, naming it and why.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const std::string& host,
                                                                uint16_t port);
  // Stops the thread and closes the socket.
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // The port listened on.
  uint16_t port() const { return port_; }

  // The page served from now on (empty until the first Publish).
  void Publish(std::string page);

 private:
  MetricsEndpoint(int listen_fd, int stop_read, int stop_write, uint16_t port);
  void Serve();
  void Answer(int connection);

  const int listen_fd_;
  const int stop_read_;  // the thread stops when this pipe becomes readable
  const int stop_write_;
  const uint16_t port_;
  std::mutex mutex_;
  std::string page_;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_METRICS_ENDPOINT_H_
