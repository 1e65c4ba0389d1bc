// ConnectionWatch: what became of a ZeroMQ socket's connection attempt, read from the socket's
// monitor, so a client that gets no answer can say why at once instead of waiting out its
// timeout: nothing listens at the endpoint (the connection was refused), or the peer refused the
// handshake (a CURVE orchestrator and a plain client, or the reverse).
//
//   ConnectionWatch watch(context, socket.handle());   // before socket.connect(endpoint)
//   socket.connect(endpoint);
//   ... while waiting for a reply:
//   if (std::optional<std::string> failure = watch.Failure()) return Unavailable(*failure);
//
// Thread-safety: used with its socket, by that socket's thread.
#ifndef COHORT_RUNTIME_CLIENT_CONNECTION_WATCH_H_
#define COHORT_RUNTIME_CLIENT_CONNECTION_WATCH_H_

#include <optional>
#include <string>
#include <zmq.hpp>

namespace cohort {

class ConnectionWatch {
 public:
  // Starts monitoring the socket `socket` (a zmq socket handle, which must outlive this object, as
  // must `context`). A socket whose monitor cannot start is simply not watched: Failure() never
  // says anything.
  ConnectionWatch(zmq::context_t& context, void* socket);
  ~ConnectionWatch();
  ConnectionWatch(const ConnectionWatch&) = delete;
  ConnectionWatch& operator=(const ConnectionWatch&) = delete;

  // Reads the events that arrived (without waiting). Once a handshake has succeeded, nullopt for
  // good. Before that: "nothing listens there" when a connection attempt failed (ZeroMQ goes on
  // retrying, but no orchestrator answers meanwhile), "it refused the handshake (<what>)" when
  // the peer refused it; nullopt while nothing is known.
  std::optional<std::string> Failure();

  // Whether a handshake has succeeded (as far as Failure() has read): the peer was there and
  // spoke the same security mechanism.
  bool connected() const { return connected_; }

 private:
  void* watched_;
  std::optional<zmq::socket_t> monitor_;  // a PAIR socket reading `watched_`'s events
  bool connected_ = false;
  std::optional<std::string> failure_;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_CLIENT_CONNECTION_WATCH_H_
