// The ZAP decision: who is accepted under which name, and the refusal lines.
#include "runtime/security/zap_answer.h"

#include <zmq.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/security/curve_keys.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Binary(const std::string& z85) {
  std::string bytes(32, '\0');
  zmq_z85_decode(reinterpret_cast<uint8_t*>(bytes.data()), z85.c_str());
  return bytes;
}

std::vector<std::string> CurveRequest(const std::string& z85_key) {
  return {"1.0", "req-7", "", "10.0.0.5", "peer", "CURVE", Binary(z85_key)};
}

TEST(ZapAnswerTest, AcceptsAnAuthorizedKeyUnderItsName) {
  const std::string key = GenerateCurveKeyPair().value().public_key;
  AuthorizedKeys keys;
  ASSERT_TRUE(keys.Add(key, "agent-7").ok());
  const ZapAnswer answer = AnswerZapRequest(CurveRequest(key), keys);
  EXPECT_THAT(answer.reply, ElementsAre("1.0", "req-7", "200", "OK", "agent-7", ""));
  EXPECT_FALSE(answer.refusal.has_value());
}

TEST(ZapAnswerTest, RefusesAnUnknownKeyAndSaysWhoFromWhere) {
  const std::string key = GenerateCurveKeyPair().value().public_key;
  const ZapAnswer answer = AnswerZapRequest(CurveRequest(key), AuthorizedKeys());
  EXPECT_THAT(answer.reply, ElementsAre("1.0", "req-7", "400", "unknown key", "", ""));
  ASSERT_TRUE(answer.refusal.has_value());
  EXPECT_THAT(*answer.refusal, HasSubstr(key));
  EXPECT_THAT(*answer.refusal, HasSubstr("from 10.0.0.5"));
}

TEST(ZapAnswerTest, RefusesOtherMechanisms) {
  const ZapAnswer answer = AnswerZapRequest(
      {"1.0", "1", "cohort", "10.0.0.5", "", "PLAIN", "user", "password"}, AuthorizedKeys());
  EXPECT_EQ(answer.reply[2], "400");
  EXPECT_THAT(answer.refusal.value(), HasSubstr("PLAIN client from 10.0.0.5"));
  EXPECT_EQ(AnswerZapRequest({"1.0", "2", "", "10.0.0.5", "", "NULL"}, AuthorizedKeys()).reply[2],
            "400");
}

TEST(ZapAnswerTest, MalformedRequestsGetAServerError) {
  EXPECT_EQ(AnswerZapRequest({"1.0", "3"}, AuthorizedKeys()).reply[2], "500");
  EXPECT_EQ(
      AnswerZapRequest({"2.0", "3", "", "a", "", "CURVE", std::string(32, 'k')}, AuthorizedKeys())
          .reply[2],
      "500");
  const ZapAnswer short_key =
      AnswerZapRequest({"1.0", "4", "", "a", "", "CURVE", "short"}, AuthorizedKeys());
  EXPECT_EQ(short_key.reply[1], "4");
  EXPECT_EQ(short_key.reply[2], "500");
  EXPECT_EQ(AnswerZapRequest({}, AuthorizedKeys()).reply.size(), 6u);
}

}  // namespace
}  // namespace cohort
