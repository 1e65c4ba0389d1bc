// ConnectionWatch: what became of a ZeroMQ socket's connection, read from the socket's monitor.
// A client that gets no answer says why at once instead of waiting out its timeout: nothing
// listens at the endpoint (the connection was refused), or the peer refused the handshake (a
// CURVE orchestrator and a plain client, or the reverse). A daemon that holds a connection (the
// agent's to its orchestrator) learns when it is lost and when it is back.
//
//   ConnectionWatch watch(context, socket.handle());   // before socket.connect(endpoint)
//   socket.connect(endpoint);
//   ... while waiting for a reply:
//   if (std::optional<std::string> failure = watch.Failure()) return Unavailable(*failure);
//   ... or, holding the connection:
//   watch.Update();
//   if (was_connected && !watch.connected()) Log("lost the connection");
//
// ZeroMQ reconnects by itself; the watch only tells. A peer that goes silent without closing the
// connection (a stopped process, a lost host) is noticed only where the socket has ZeroMQ's
// heartbeats on (ZMQ_HEARTBEAT_IVL and ZMQ_HEARTBEAT_TIMEOUT).
//
// Thread-safety: used with its socket, by that socket's thread.
#ifndef COHORT_RUNTIME_CONTROL_CONNECTION_WATCH_H_
#define COHORT_RUNTIME_CONTROL_CONNECTION_WATCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <zmq.hpp>

namespace cohort {

class ConnectionWatch {
 public:
  // Starts monitoring the socket `socket` (a zmq socket handle, which must outlive this object, as
  // must `context`). A socket whose monitor cannot start is simply not watched: Failure() never
  // says anything and connected() stays false.
  ConnectionWatch(zmq::context_t& context, void* socket);
  ~ConnectionWatch();
  ConnectionWatch(const ConnectionWatch&) = delete;
  ConnectionWatch& operator=(const ConnectionWatch&) = delete;

  // Reads the events that arrived, without waiting.
  void Update();

  // Update(), then: once a handshake has ever succeeded, nullopt for good. Before that: "nothing
  // listens there" when a connection attempt failed (ZeroMQ goes on retrying, but no orchestrator
  // answers meanwhile), "it refused the handshake (<what>)" when the peer refused it; nullopt
  // while nothing is known.
  std::optional<std::string> Failure();
  // Failure() when it is the peer's refusal of the handshake (not "nothing listens there").
  std::optional<std::string> Refusal();

  // Whether a handshake has succeeded and the connection has not been lost since, as far as the
  // events read so far tell: the peer is there and speaks the same security mechanism.
  bool connected() const { return connected_; }
  // Whether a handshake has ever succeeded.
  bool ever_connected() const { return ever_connected_; }
  // How many times a connection that had succeeded was lost.
  uint64_t losses() const { return losses_; }

 private:
  void* watched_;
  std::optional<zmq::socket_t> monitor_;  // a PAIR socket reading `watched_`'s events
  bool connected_ = false;
  bool ever_connected_ = false;
  uint64_t losses_ = 0;
  std::optional<std::string> failure_;
  bool refused_ = false;  // failure_ is a refused handshake
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_CONNECTION_WATCH_H_
