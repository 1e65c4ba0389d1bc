// GlooStore: Gloo's store calls over a RendezvousStore, failures thrown as GlooStoreError.
#include "runtime/collective/gloo/gloo_store.h"

#include <thread>

#include "gtest/gtest.h"

namespace cohort {
namespace {

TEST(GlooStoreTest, SetThenGetRoundTripsBytes) {
  InMemoryRendezvousStore rendezvous;
  GlooStore store(rendezvous, std::chrono::seconds(1));
  const std::vector<char> bytes = {'a', '\0', 'b', '\xff'};
  store.set("0", bytes);
  EXPECT_EQ(store.get("0"), bytes);
  EXPECT_EQ(rendezvous.Get("0", std::chrono::milliseconds(0)).value(), std::string("a\0b\xff", 4));
}

TEST(GlooStoreTest, WaitReturnsOnceEveryKeyIsSet) {
  InMemoryRendezvousStore rendezvous;
  GlooStore store(rendezvous, std::chrono::seconds(5));
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    store.set("1", {'x'});
    store.set("2", {'y'});
  });
  EXPECT_NO_THROW(store.wait({"1", "2"}, std::chrono::seconds(5)));
  writer.join();
}

TEST(GlooStoreTest, MissingKeyThrowsDeadlineExceeded) {
  InMemoryRendezvousStore rendezvous;
  GlooStore store(rendezvous, std::chrono::milliseconds(20));
  try {
    store.wait({"never"}, std::chrono::milliseconds(20));
    FAIL() << "wait returned without the key";
  } catch (const GlooStoreError& e) {
    EXPECT_TRUE(absl::IsDeadlineExceeded(e.status())) << e.status();
    EXPECT_NE(e.status().message().find("never"), absl::string_view::npos);
  }
  EXPECT_THROW(store.get("never"), GlooStoreError);
}

}  // namespace
}  // namespace cohort
