// The metrics endpoint answered over loopback by a plain TCP client.
#include "runtime/observe/metrics_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Sends `request` to 127.0.0.1:`port` and returns everything the server sends before closing.
std::string Exchange(uint16_t port, const std::string& request) {
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

TEST(MetricsEndpointTest, ServesTheLatestPublishedPage) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start("127.0.0.1", 0);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const uint16_t port = (*endpoint)->port();
  ASSERT_NE(port, 0);
  (*endpoint)->Publish("first 1\n");
  (*endpoint)->Publish("up 1\n");
  const std::string response =
      Exchange(port, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(response, HasSubstr("Content-Type: text/plain; version=0.0.4"));
  EXPECT_THAT(response, HasSubstr("Content-Length: 5\r\n"));
  EXPECT_THAT(response, EndsWith("\r\n\r\nup 1\n"));
  // A query string is ignored; HEAD gets the head alone.
  EXPECT_THAT(Exchange(port, "GET /metrics?x=1 HTTP/1.0\r\n\r\n"), EndsWith("up 1\n"));
  EXPECT_THAT(Exchange(port, "HEAD /metrics HTTP/1.1\r\n\r\n"),
              EndsWith("Connection: close\r\n\r\n"));
}

TEST(MetricsEndpointTest, RefusesOtherPathsMethodsAndGarbage) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start("127.0.0.1", 0);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const uint16_t port = (*endpoint)->port();
  EXPECT_THAT(Exchange(port, "GET / HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 404 "));
  EXPECT_THAT(Exchange(port, "POST /metrics HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 405 "));
  EXPECT_THAT(Exchange(port, "\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
  // Still serving after all that.
  EXPECT_THAT(Exchange(port, "GET /metrics HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 200 OK"));
}

TEST(MetricsEndpointTest, NamesAnAddressItCannotUse) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> bad = MetricsEndpoint::Start("localhost", 0);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> first = MetricsEndpoint::Start("127.0.0.1", 0);
  ASSERT_TRUE(first.ok());
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> taken =
      MetricsEndpoint::Start("127.0.0.1", (*first)->port());
  EXPECT_TRUE(absl::IsUnavailable(taken.status())) << taken.status();
  EXPECT_THAT(std::string(taken.status().message()),
              HasSubstr(absl::StrCat("127.0.0.1:", (*first)->port())));
}

}  // namespace
}  // namespace cohort
