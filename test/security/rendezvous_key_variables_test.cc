// The variables that hand a worker its rendezvous CURVE keys: what the agent sets reads back as
// the same client config; none set means no CURVE; a missing, malformed or mismatched key is an
// error naming its variable.
#include "runtime/security/rendezvous_key_variables.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/security/curve_keys.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

// An environment held in a map, looked up as getenv would.
class Environment {
 public:
  explicit Environment(std::map<std::string, std::string> variables)
      : variables_(std::move(variables)) {}

  VariableLookup Lookup() const {
    return [this](const char* name) -> const char* {
      auto found = variables_.find(name);
      return found == variables_.end() ? nullptr : found->second.c_str();
    };
  }

 private:
  std::map<std::string, std::string> variables_;
};

CurveClientConfig AgentConfig() {
  CurveClientConfig config;
  config.keys = GenerateCurveKeyPair().value();
  config.key_name = "agent-1";
  config.server_public_key = GenerateCurveKeyPair().value().public_key;
  return config;
}

std::map<std::string, std::string> VariablesOf(const CurveClientConfig& config) {
  std::map<std::string, std::string> variables;
  for (const auto& [name, value] : RendezvousKeyVariables(config)) variables[name] = value;
  return variables;
}

TEST(RendezvousKeyVariablesTest, NamesTheServerKeyAndTheAgentsKeyPair) {
  const CurveClientConfig config = AgentConfig();
  EXPECT_THAT(RendezvousKeyVariables(config),
              ElementsAre(Pair("COHORT_RENDEZVOUS_SERVER_KEY", config.server_public_key),
                          Pair("COHORT_RENDEZVOUS_PUBLIC_KEY", config.keys.public_key),
                          Pair("COHORT_RENDEZVOUS_SECRET_KEY", config.keys.secret_key)));
}

TEST(RendezvousKeyVariablesTest, WhatTheAgentSetsTheWorkerReadsBack) {
  const CurveClientConfig config = AgentConfig();
  const Environment environment(VariablesOf(config));
  absl::StatusOr<std::optional<CurveClientConfig>> read =
      ReadRendezvousKeyVariables(environment.Lookup());
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->server_public_key, config.server_public_key);
  EXPECT_EQ((*read)->keys.public_key, config.keys.public_key);
  EXPECT_EQ((*read)->keys.secret_key, config.keys.secret_key);
  EXPECT_EQ((*read)->key_name, "");
}

TEST(RendezvousKeyVariablesTest, NoVariableMeansNoCurve) {
  const Environment environment(std::map<std::string, std::string>{{"PATH", "/usr/bin"}});
  absl::StatusOr<std::optional<CurveClientConfig>> read =
      ReadRendezvousKeyVariables(environment.Lookup());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->has_value());
}

TEST(RendezvousKeyVariablesTest, AMissingKeyIsNamed) {
  std::map<std::string, std::string> variables = VariablesOf(AgentConfig());
  variables.erase("COHORT_RENDEZVOUS_SECRET_KEY");
  absl::StatusOr<std::optional<CurveClientConfig>> read =
      ReadRendezvousKeyVariables(Environment(variables).Lookup());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(read.status().message()),
              StartsWith("COHORT_RENDEZVOUS_SECRET_KEY is not set"));
}

TEST(RendezvousKeyVariablesTest, AMalformedKeyIsNamed) {
  std::map<std::string, std::string> variables = VariablesOf(AgentConfig());
  variables["COHORT_RENDEZVOUS_SERVER_KEY"] = "not a key";
  absl::StatusOr<std::optional<CurveClientConfig>> read =
      ReadRendezvousKeyVariables(Environment(variables).Lookup());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(read.status().message(),
            "COHORT_RENDEZVOUS_SERVER_KEY is not a CURVE key (40 characters of Z85)");

  variables = VariablesOf(AgentConfig());
  variables["COHORT_RENDEZVOUS_PUBLIC_KEY"] = "";
  read = ReadRendezvousKeyVariables(Environment(variables).Lookup());
  EXPECT_THAT(std::string(read.status().message()),
              StartsWith("COHORT_RENDEZVOUS_PUBLIC_KEY is not"));
}

TEST(RendezvousKeyVariablesTest, APublicKeyOfAnotherPairIsRefused) {
  std::map<std::string, std::string> variables = VariablesOf(AgentConfig());
  variables["COHORT_RENDEZVOUS_PUBLIC_KEY"] = GenerateCurveKeyPair().value().public_key;
  absl::StatusOr<std::optional<CurveClientConfig>> read =
      ReadRendezvousKeyVariables(Environment(variables).Lookup());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(read.status().message()),
              StartsWith("COHORT_RENDEZVOUS_PUBLIC_KEY does not belong"));
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("COHORT_RENDEZVOUS_SECRET_KEY"));
}

}  // namespace
}  // namespace cohort
