#include "app/serve/client_connection.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>

namespace sdgen::serve {

namespace {

// The address as httplib formats Request::remote_addr (getnameinfo, numeric).
bool addressOf(const sockaddr_storage& addr, socklen_t len, std::string& host, int& port) {
  char h[NI_MAXHOST], s[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, h, sizeof h, s, sizeof s,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return false;
  host = h;
  port = std::atoi(s);
  return true;
}

bool matches(int fd, const std::string& localAddr, int localPort, const std::string& remoteAddr, int remotePort) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  std::string host;
  int port = 0;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || !addressOf(addr, len, host, port) ||
      host != remoteAddr || port != remotePort)
    return false;
  if (localPort < 0) return true;  // not filled in by this httplib: the peer address alone decides
  len = sizeof addr;
  return getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 && addressOf(addr, len, host, port) &&
         host == localAddr && port == localPort;
}

}  // namespace

ClientConnection::ClientConnection(const std::string& localAddr, int localPort, const std::string& remoteAddr,
                                   int remotePort) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) {
    char* tail = nullptr;
    const long fd = std::strtol(it->path().filename().c_str(), &tail, 10);
    if (*tail == '\0' && matches(static_cast<int>(fd), localAddr, localPort, remoteAddr, remotePort)) {
      fd_ = static_cast<int>(fd);
      return;
    }
  }
}

bool ClientConnection::closed() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
  if (p.revents & POLLIN) {
    // Readable: either EOF (0 bytes) or the next pipelined request, which stays in the buffer.
    char c;
    return recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
  }
  return false;
}

}  // namespace sdgen::serve
