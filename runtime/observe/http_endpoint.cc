#include "runtime/observe/http_endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

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

const char* StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    default:
      return "Error";
  }
}

// The response's head and, unless `head_only`, its body.
std::string Response(const HttpReply& reply, bool head_only) {
  std::string response = absl::StrCat("HTTP/1.1 ", reply.status, " ", StatusText(reply.status),
                                      "\r\nContent-Type: ", reply.content_type,
                                      "\r\nContent-Length: ", reply.body.size(),
                                      "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n");
  if (!head_only) response += reply.body;
  return response;
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

// %XX and '+' decoded; a malformed escape is kept as it is.
std::string Decoded(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() &&
               std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& text,
                                                 const std::string& default_host) {
  ListenAddress address;
  address.host = default_host;
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

bool IsLoopbackHost(const std::string& host) {
  in_addr address{};
  return ::inet_pton(AF_INET, host.c_str(), &address) == 1 && (ntohl(address.s_addr) >> 24) == 127;
}

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(const ListenAddress& listen,
                                                                  const std::string& what,
                                                                  HttpHandler handler) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(listen.port);
  if (::inet_pton(AF_INET, listen.host.c_str(), &address.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " address '", listen.host, "' is not an IPv4 address (e.g. 0.0.0.0)"));
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 16) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("cannot serve ", what, " on ", listen.host, ":",
                                               listen.port, ": ", std::strerror(error)));
  }
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  int stop[2];
  if (::pipe2(stop, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("pipe: ", std::strerror(error)));
  }
  return std::unique_ptr<HttpEndpoint>(
      new HttpEndpoint(fd, stop[0], stop[1], ntohs(address.sin_port), std::move(handler)));
}

HttpEndpoint::HttpEndpoint(int listen_fd, int stop_read, int stop_write, uint16_t port,
                           HttpHandler handler)
    : listen_fd_(listen_fd),
      stop_read_(stop_read),
      stop_write_(stop_write),
      port_(port),
      handler_(std::move(handler)),
      thread_([this] { Serve(); }) {}

HttpEndpoint::~HttpEndpoint() {
  const char byte = 0;
  while (::write(stop_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  ::close(listen_fd_);
  ::close(stop_read_);
  ::close(stop_write_);
}

void HttpEndpoint::Serve() {
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

void HttpEndpoint::Answer(int connection) {
  const std::string head = ReadHead(connection);
  std::vector<std::string> lines = absl::StrSplit(head, '\n');
  const std::vector<std::string> parts = absl::StrSplit(
      absl::StripTrailingAsciiWhitespace(lines.empty() ? "" : lines[0]), ' ', absl::SkipEmpty());
  if (parts.size() < 2 || parts[1].empty() || parts[1][0] != '/') {
    SendAll(connection, Response(HttpReply{400, "text/plain", "bad request\n"}, false));
    return;
  }
  if (parts[0] != "GET" && parts[0] != "HEAD") {
    SendAll(connection, Response(HttpReply{405, "text/plain", "GET or HEAD only\n"}, false));
    return;
  }
  HttpRequest request;
  request.method = parts[0];
  const size_t question = parts[1].find('?');
  request.path = parts[1].substr(0, question);
  if (question != std::string::npos) {
    for (absl::string_view pair :
         absl::StrSplit(absl::string_view(parts[1]).substr(question + 1), '&', absl::SkipEmpty())) {
      const size_t equals = pair.find('=');
      request.query[Decoded(pair.substr(0, equals))] =
          equals == absl::string_view::npos ? "" : Decoded(pair.substr(equals + 1));
    }
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const absl::string_view line = absl::StripTrailingAsciiWhitespace(lines[i]);
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    request.headers[absl::AsciiStrToLower(line.substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  SendAll(connection, Response(handler_(request), request.method == "HEAD"));
}

}  // namespace cohort
