#pragma once
// Whether the client of a request still listens. Debian 12's cpp-httplib (0.11) gives a handler no way to ask
// (Request::is_connection_closed came later), so the handler finds its own socket once — the one whose local
// and peer addresses are the request's; it stays open and unchanged while the handler runs, because httplib
// closes it only after the handler returns — and then polls it: a peer that closed its end reads as EOF.
#include <optional>
#include <string>

namespace sdgen::serve {

class ClientConnection {
 public:
  // nullopt-like: an object whose closed() is always false when the socket cannot be found.
  ClientConnection(const std::string& localAddr, int localPort, const std::string& remoteAddr, int remotePort);

  bool found() const { return fd_ >= 0; }
  // True once the peer has closed or reset the connection. Never blocks; never consumes data.
  bool closed() const;

 private:
  int fd_ = -1;
};

}  // namespace sdgen::serve
