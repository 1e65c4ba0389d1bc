// A hyperparameter given as NAME=VALUE (`cohort plugin check --hparam`) is typed as the config
// types the same value in YAML or with --set: the types a plugin's trials receive. It used to
// be typed by its own rules (`nan` and `0x10` numbers, `yes` a string, quotes kept).
#include "runtime/config/hyperparameter_assignment.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

TEST(HyperparameterAssignmentTest, TypesTheValueAsTheConfigDoes) {
  Hyperparameters hp;
  for (const char* assignment :
       {"layers=3", "lr=1e-3", "nesterov=true", "shuffle=yes", "data_dir=/tmp/mnist",
        "empty=", "not_a_number=nan", "infinite=inf", "hex=0x10", "quoted='3'",
        "double_quoted=\"nan\"", "sizes=[64, 32]", "opt={lr: 0.1, nested: {depth: 2}}"}) {
    ASSERT_TRUE(SetHyperparameterFromAssignment(assignment, hp).ok()) << assignment;
  }
  EXPECT_EQ(*hp.GetInt("layers"), 3);
  EXPECT_DOUBLE_EQ(*hp.GetDouble("lr"), 1e-3);
  EXPECT_EQ(*hp.GetBool("nesterov"), true);
  EXPECT_EQ(*hp.GetBool("shuffle"), true);
  EXPECT_EQ(**hp.GetString("data_dir"), "/tmp/mnist");
  EXPECT_EQ(hp.TypeOf("empty"), COHORT_HPARAM_OTHER) << "null, as --set reads an empty value";
  EXPECT_EQ(*hp.GetText("empty"), "~");
  EXPECT_EQ(**hp.GetString("not_a_number"), "nan");
  EXPECT_EQ(**hp.GetString("infinite"), "inf");
  EXPECT_EQ(**hp.GetString("hex"), "0x10");
  EXPECT_EQ(**hp.GetString("quoted"), "3");
  EXPECT_EQ(**hp.GetString("double_quoted"), "nan");
  EXPECT_EQ(hp.TypeOf("sizes"), COHORT_HPARAM_OTHER);
  // A map is a group, as in the config.
  EXPECT_DOUBLE_EQ(*hp.GetDouble("opt.lr"), 0.1);
  EXPECT_EQ(*hp.GetInt("opt.nested.depth"), 2);
  EXPECT_EQ(hp.TypeOf("opt"), COHORT_HPARAM_ABSENT);
}

TEST(HyperparameterAssignmentTest, RefusesWhatIsNoAssignment) {
  Hyperparameters hp;
  EXPECT_EQ(SetHyperparameterFromAssignment("novalue", hp).message(),
            "expected NAME=VALUE, got 'novalue'");
  EXPECT_FALSE(SetHyperparameterFromAssignment("=3", hp).ok());
  const absl::Status bad = SetHyperparameterFromAssignment("sizes=[64, 32", hp);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("'sizes=[64, 32': the value is not valid YAML"));
  EXPECT_TRUE(hp.values().empty());
}

}  // namespace
}  // namespace cohort
