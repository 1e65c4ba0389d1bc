// HttpEndpoint: a small HTTP/1.1 server on a TCP port for what the daemons expose to people and
// monitoring (the Prometheus page, the orchestrator's web dashboard). Each GET or HEAD request is
// handed to the owner's handler on the endpoint's own thread, so the handler must only read what
// the owner published for it (under its own lock). Other methods get 405, a request line that
// does not parse 400. Connections are served one at a time and closed after each answer; a client
// that has not sent its request within 2 s is dropped; a request head over 8 KiB is cut there.
//
//   absl::StatusOr<std::unique_ptr<HttpEndpoint>> endpoint = HttpEndpoint::Start(
//       {"127.0.0.1", 8080}, "dashboard", [](const HttpRequest& request) {
//         return HttpReply{200, "text/plain", "hello\n"};
//       });
//
// Thread-safety: the handler runs on the endpoint's thread, one request at a time.
#ifndef COHORT_RUNTIME_OBSERVE_HTTP_ENDPOINT_H_
#define COHORT_RUNTIME_OBSERVE_HTTP_ENDPOINT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace cohort {

// Where to listen, from "[HOST:]PORT" (the --metrics-address and --web-address flags): HOST an
// IPv4 address, `default_host` when absent; PORT from 0 to 65535. INVALID_ARGUMENT naming the
// form otherwise.
struct ListenAddress {
  std::string host;
  uint16_t port = 0;
};
absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& text,
                                                 const std::string& default_host = "0.0.0.0");

// Whether `host` is an IPv4 loopback address (127.0.0.0/8).
bool IsLoopbackHost(const std::string& host);

struct HttpRequest {
  std::string method;                          // GET or HEAD
  std::string path;                            // without the query, not decoded
  std::map<std::string, std::string> query;    // name -> value, %-decoded ('+' is a space)
  std::map<std::string, std::string> headers;  // lower-case name -> value
};

struct HttpReply {
  int status = 200;  // 200, 401, 404, ...
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpReply(const HttpRequest&)>;

class HttpEndpoint {
 public:
  // Listens on `address` (host "0.0.0.0" for every interface, port 0 for any free one) and
  // answers with `handler`. `what` names the server in errors ("metrics", "dashboard").
  // INVALID_ARGUMENT for a host that is not an IPv4 address; UNAVAILABLE when the port cannot be
  // bound, naming it and why.
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(const ListenAddress& address,
                                                             const std::string& what,
                                                             HttpHandler handler);
  // Stops the thread and closes the socket.
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // The port listened on.
  uint16_t port() const { return port_; }

 private:
  HttpEndpoint(int listen_fd, int stop_read, int stop_write, uint16_t port, HttpHandler handler);
  void Serve();
  void Answer(int connection);

  const int listen_fd_;
  const int stop_read_;  // the thread stops when this pipe becomes readable
  const int stop_write_;
  const uint16_t port_;
  const HttpHandler handler_;
  std::thread thread_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_OBSERVE_HTTP_ENDPOINT_H_
