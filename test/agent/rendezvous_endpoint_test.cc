// Where an agent's workers connect for the rendezvous of a task spanning agents: the endpoint the
// orchestrator names, its wildcard host replaced by the orchestrator's host.
#include "runtime/agent/rendezvous_endpoint.h"

#include "gtest/gtest.h"

namespace cohort {
namespace {

constexpr char kOrchestrator[] = "tcp://10.0.0.5:29400";

TEST(RendezvousEndpointTest, AWildcardHostBecomesTheOrchestratorsHost) {
  EXPECT_EQ(ReachableRendezvousEndpoint("tcp://0.0.0.0:29402", kOrchestrator),
            "tcp://10.0.0.5:29402");
  EXPECT_EQ(ReachableRendezvousEndpoint("tcp://*:29402", kOrchestrator), "tcp://10.0.0.5:29402");
  EXPECT_EQ(ReachableRendezvousEndpoint("tcp://[::]:29402", "tcp://[fd00::5]:29400"),
            "tcp://[fd00::5]:29402");
  EXPECT_EQ(ReachableRendezvousEndpoint("tcp://*:29402", "tcp://head.cluster:29400"),
            "tcp://head.cluster:29402");
}

TEST(RendezvousEndpointTest, ARealHostIsKept) {
  EXPECT_EQ(ReachableRendezvousEndpoint("tcp://10.0.0.7:29402", kOrchestrator),
            "tcp://10.0.0.7:29402");
  EXPECT_EQ(ReachableRendezvousEndpoint("tcp://127.0.0.1:41234", kOrchestrator),
            "tcp://127.0.0.1:41234");
}

TEST(RendezvousEndpointTest, WhatCannotBeImprovedIsLeftAsGiven) {
  EXPECT_EQ(ReachableRendezvousEndpoint("tcp://0.0.0.0:29402", "tcp://*:29400"),
            "tcp://0.0.0.0:29402")
      << "the orchestrator's host is no better";
  EXPECT_EQ(ReachableRendezvousEndpoint("tcp://0.0.0.0:29402", "ipc:///run/cohort.sock"),
            "tcp://0.0.0.0:29402");
  EXPECT_EQ(ReachableRendezvousEndpoint("ipc:///run/rendezvous", kOrchestrator),
            "ipc:///run/rendezvous");
  EXPECT_EQ(ReachableRendezvousEndpoint("tcp://0.0.0.0", kOrchestrator), "tcp://0.0.0.0");
  EXPECT_EQ(ReachableRendezvousEndpoint("", kOrchestrator), "");
}

}  // namespace
}  // namespace cohort
