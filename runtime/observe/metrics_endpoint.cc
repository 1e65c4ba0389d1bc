#include "runtime/observe/metrics_endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/observe/prometheus_text.h"

namespace cohort {
namespace {

constexpr size_t kMostRequestBytes = 8192;
constexpr int kRequestTimeoutMs = 2000;

bool SendAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

std::string Response(absl::string_view status, absl::string_view content_type,
                     absl::string_view body) {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
}

// The request's head (up to its blank line), or what arrived before the timeout or the limit.
std::string ReadHead(int fd) {
  std::string head;
  char buffer[1024];
  while (head.size() < kMostRequestBytes && head.find("\r\n\r\n") == std::string::npos &&
         head.find("\n\n") == std::string::npos) {
    pollfd wait = {fd, POLLIN, 0};
    if (::poll(&wait, 1, kRequestTimeoutMs) <= 0) break;
    const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    head.append(buffer, static_cast<size_t>(got));
  }
  return head;
}

}  // namespace

absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& text) {
  ListenAddress address;
  address.host = "0.0.0.0";
  std::string port = text;
  if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
    address.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  in_addr ignored{};
  uint32_t number = 0;
  if (::inet_pton(AF_INET, address.host.c_str(), &ignored) != 1 ||
      !absl::SimpleAtoi(port, &number) || number > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text,
                     "' is not [HOST:]PORT with HOST an IPv4 address and PORT from 0 to 65535 "
                     "(e.g. 9464 or 127.0.0.1:9464)"));
  }
  address.port = static_cast<uint16_t>(number);
  return address;
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(const std::string& host,
                                                                        uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address '", host, "' is not an IPv4 address (e.g. 0.0.0.0)"));
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 16) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", host, ":", port, ": ", std::strerror(error)));
  }
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  int stop[2];
  if (::pipe2(stop, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("pipe: ", std::strerror(error)));
  }
  return std::unique_ptr<MetricsEndpoint>(
      new MetricsEndpoint(fd, stop[0], stop[1], ntohs(address.sin_port)));
}

MetricsEndpoint::MetricsEndpoint(int listen_fd, int stop_read, int stop_write, uint16_t port)
    : listen_fd_(listen_fd),
      stop_read_(stop_read),
      stop_write_(stop_write),
      port_(port),
      thread_([this] { Serve(); }) {}

MetricsEndpoint::~MetricsEndpoint() {
  const char byte = 0;
  while (::write(stop_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  ::close(listen_fd_);
  ::close(stop_read_);
  ::close(stop_write_);
}

void MetricsEndpoint::Publish(std::string page) {
  std::lock_guard<std::mutex> lock(mutex_);
  page_ = std::move(page);
}

void MetricsEndpoint::Serve() {
  for (;;) {
    pollfd waits[2] = {{listen_fd_, POLLIN, 0}, {stop_read_, POLLIN, 0}};
    if (::poll(waits, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (waits[1].revents != 0) return;
    if ((waits[0].revents & POLLIN) == 0) continue;
    const int connection = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    Answer(connection);
    ::close(connection);
  }
}

void MetricsEndpoint::Answer(int connection) {
  const std::string head = ReadHead(connection);
  const std::string line = head.substr(0, head.find_first_of("\r\n"));
  const std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (parts.size() < 2) {
    SendAll(connection, Response("400 Bad Request", "text/plain", "bad request\n"));
    return;
  }
  const std::string path = parts[1].substr(0, parts[1].find('?'));
  if (parts[0] != "GET" && parts[0] != "HEAD") {
    SendAll(connection, Response("405 Method Not Allowed", "text/plain", "GET /metrics\n"));
    return;
  }
  if (path != "/metrics") {
    SendAll(connection, Response("404 Not Found", "text/plain", "metrics are at /metrics\n"));
    return;
  }
  std::string page;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    page = page_;
  }
  std::string response = Response("200 OK", kPrometheusContentType, page);
  if (parts[0] == "HEAD") response.resize(response.size() - page.size());
  SendAll(connection, response);
}

}  // namespace cohort
