// What the HTTP endpoint tests share: one request over loopback, answered in full.
#ifndef COHORT_TEST_OBSERVE_LOOPBACK_HTTP_H_
#define COHORT_TEST_OBSERVE_LOOPBACK_HTTP_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace cohort::observe_test {

// Sends `request` to 127.0.0.1:`port` and returns everything the server sends before closing.
inline std::string Exchange(uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  std::string response;
  char buffer[4096];
  for (ssize_t got; (got = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, got);
  ::close(fd);
  return response;
}

}  // namespace cohort::observe_test

#endif  // COHORT_TEST_OBSERVE_LOOPBACK_HTTP_H_
