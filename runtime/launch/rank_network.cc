#include "runtime/launch/rank_network.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cohort {

std::string LaunchedAgentId(uint32_t rank, uint32_t world_size) {
  const std::string last = std::to_string(world_size > 0 ? world_size - 1 : 0);
  std::string digits = std::to_string(rank);
  if (digits.size() < last.size()) digits.insert(0, last.size() - digits.size(), '0');
  return absl::StrCat("rank-", digits);
}

bool IsLoopbackName(absl::string_view host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || absl::StartsWith(host, "127.");
}

absl::StatusOr<std::string> AddressToward(const std::string& host) {
  if (IsLoopbackName(host)) return std::string("127.0.0.1");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  // Any port: a UDP connect only picks the route.
  if (const int error = getaddrinfo(host.c_str(), "9", &hints, &found); error != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve rank 0's host '", host, "': ", gai_strerror(error)));
  }
  std::string problem = "no address";
  for (const addrinfo* candidate = found; candidate != nullptr; candidate = candidate->ai_next) {
    const int fd = socket(candidate->ai_family, candidate->ai_socktype, candidate->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t length = sizeof(local);
    if (connect(fd, candidate->ai_addr, candidate->ai_addrlen) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) {
      problem = std::strerror(errno);
      close(fd);
      continue;
    }
    close(fd);
    char text[INET6_ADDRSTRLEN] = {};
    const void* address =
        local.ss_family == AF_INET6
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&local)->sin6_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&local)->sin_addr);
    if (inet_ntop(local.ss_family, address, text, sizeof(text)) != nullptr) {
      freeaddrinfo(found);
      return std::string(text);
    }
  }
  freeaddrinfo(found);
  return absl::UnavailableError(
      absl::StrCat("no route from this machine to rank 0's host '", host, "': ", problem));
}

bool AcceptsConnections(const std::string& host, uint16_t port, double timeout_seconds) {
  return ProbeConnections(host, port, timeout_seconds) == ProbeAnswer::kServing;
}

ProbeAnswer ProbeConnections(const std::string& host, uint16_t port, double timeout_seconds) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) {
    return ProbeAnswer::kNoAnswer;
  }
  ProbeAnswer answer = ProbeAnswer::kNoAnswer;
  bool refused = found != nullptr;  // every address refused
  for (const addrinfo* candidate = found; candidate != nullptr && answer != ProbeAnswer::kServing;
       candidate = candidate->ai_next) {
    const int fd = socket(candidate->ai_family, candidate->ai_socktype | SOCK_NONBLOCK,
                          candidate->ai_protocol);
    if (fd < 0) {
      refused = false;
      continue;
    }
    int error = 0;
    if (connect(fd, candidate->ai_addr, candidate->ai_addrlen) == 0) {
      answer = ProbeAnswer::kServing;
    } else if (errno == EINPROGRESS) {
      pollfd waiting{fd, POLLOUT, 0};
      socklen_t length = sizeof(error);
      if (poll(&waiting, 1, static_cast<int>(timeout_seconds * 1000)) != 1 ||
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
        error = ETIMEDOUT;
      }
      if (error == 0) answer = ProbeAnswer::kServing;
    } else {
      error = errno;
    }
    refused = refused && error == ECONNREFUSED;
    close(fd);
  }
  freeaddrinfo(found);
  if (answer == ProbeAnswer::kServing) return answer;
  return refused ? ProbeAnswer::kRefused : ProbeAnswer::kNoAnswer;
}

}  // namespace cohort
