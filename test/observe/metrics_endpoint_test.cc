// The metrics endpoint answered over loopback by a plain TCP client.
#include "runtime/observe/metrics_endpoint.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/observe/loopback_http.h"

namespace cohort {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using observe_test::Exchange;

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
