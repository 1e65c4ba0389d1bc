// The HTTP endpoint answered over loopback by a plain TCP client: what the handler sees of a
// request, what HEAD and refusals send, and the listen-address rules.
#include "runtime/observe/http_endpoint.h"

#include <mutex>
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

TEST(HttpEndpointTest, TheHandlerSeesPathQueryAndHeaders) {
  std::mutex mutex;
  HttpRequest seen;
  absl::StatusOr<std::unique_ptr<HttpEndpoint>> endpoint =
      HttpEndpoint::Start({"127.0.0.1", 0}, "test", [&](const HttpRequest& request) {
        std::lock_guard<std::mutex> lock(mutex);
        seen = request;
        return HttpReply{200, "application/json", "{\"ok\":true}"};
      });
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const uint16_t port = (*endpoint)->port();
  const std::string response =
      Exchange(port,
               "GET /api/trials/7/logs?lines=20&token=a%2Bb+c&flag HTTP/1.1\r\n"
               "Host: x\r\nAuthorization: Bearer s3cret\r\n\r\n");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(response, HasSubstr("Content-Type: application/json\r\n"));
  EXPECT_THAT(response, HasSubstr("Content-Length: 11\r\n"));
  EXPECT_THAT(response, EndsWith("\r\n\r\n{\"ok\":true}"));
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.path, "/api/trials/7/logs");
  EXPECT_EQ(seen.query.at("lines"), "20");
  EXPECT_EQ(seen.query.at("token"), "a+b c");
  EXPECT_EQ(seen.query.at("flag"), "");
  EXPECT_EQ(seen.headers.at("authorization"), "Bearer s3cret");
  EXPECT_EQ(seen.headers.at("host"), "x");
}

TEST(HttpEndpointTest, HeadSendsNoBodyAndOtherRequestsAreRefused) {
  absl::StatusOr<std::unique_ptr<HttpEndpoint>> endpoint =
      HttpEndpoint::Start({"127.0.0.1", 0}, "test", [](const HttpRequest& request) {
        return HttpReply{404, "text/plain", request.path};
      });
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const uint16_t port = (*endpoint)->port();
  const std::string head = Exchange(port, "HEAD /missing HTTP/1.1\r\n\r\n");
  EXPECT_THAT(head, StartsWith("HTTP/1.1 404 Not Found\r\n"));
  EXPECT_THAT(head, HasSubstr("Content-Length: 8\r\n"));
  EXPECT_THAT(head, EndsWith("\r\n\r\n"));
  EXPECT_THAT(Exchange(port, "POST / HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 405 "));
  EXPECT_THAT(Exchange(port, "GET nothing HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Exchange(port, "\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
  // GET sends the body HEAD left out.
  EXPECT_THAT(Exchange(port, "GET /x HTTP/1.1\r\n\r\n"), EndsWith("\r\n\r\n/x"));
}

TEST(HttpEndpointTest, ListenAddressesAndLoopback) {
  absl::StatusOr<ListenAddress> bare = ParseListenAddress("8080", "127.0.0.1");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->host, "127.0.0.1");
  EXPECT_EQ(bare->port, 8080);
  absl::StatusOr<ListenAddress> metrics = ParseListenAddress("9464");
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->host, "0.0.0.0");
  EXPECT_FALSE(ParseListenAddress("localhost:80").ok());
  EXPECT_FALSE(ParseListenAddress("70000").ok());
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("localhost"));
}

}  // namespace
}  // namespace cohort
