// Minimal blocking HTTP server (POSIX sockets) behind `mabd view --serve`.
#include "cli/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>

#include "cli/commands.h"

namespace mabd::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_stop_signal(int) { g_stop = 1; }

/// Closes a file descriptor when it goes out of scope.
struct Socket {
  int fd = -1;
  explicit Socket(int f) : fd(f) {}
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

/// Installs SIGINT/SIGTERM handlers that set g_stop, restoring the previous ones on exit.
class StopSignals {
 public:
  StopSignals() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: poll() returns EINTR
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR && !g_stop) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void respond(int fd, const char* status, const char* type, const std::string& body,
             bool with_body, const char* extra_headers = "") {
  std::string head = std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + type +
                     "\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\nCache-Control: no-store\r\nConnection: close\r\n" + extra_headers +
                     "\r\n";
  if (send_all(fd, head.data(), head.size()) && with_body) {
    send_all(fd, body.data(), body.size());
  }
}

/// Reads one request head and answers it.
void handle(int fd, const std::string& page) {
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  std::string request;
  char buffer[4096];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR && !g_stop) continue;
    if (n <= 0) break;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  const std::size_t line_end = request.find("\r\n");
  if (line_end == std::string::npos) {
    respond(fd, "400 Bad Request", "text/plain; charset=utf-8", "bad request\n", true);
    return;
  }
  const std::string line = request.substr(0, line_end);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) {
    respond(fd, "400 Bad Request", "text/plain; charset=utf-8", "bad request\n", true);
    return;
  }
  const std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find_first_of("?#"));
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) {
    respond(fd, "405 Method Not Allowed", "text/plain; charset=utf-8", "method not allowed\n",
            true, "Allow: GET, HEAD\r\n");
  } else if (target == "/" || target == "/index.html") {
    respond(fd, "200 OK", "text/html; charset=utf-8", page, !head_only);
  } else {
    respond(fd, "404 Not Found", "text/plain; charset=utf-8", "not found\n", !head_only);
  }
}

}  // namespace

void serve_page(const std::string& page, int port, const std::function<void(int)>& on_listening) {
  if (port < 0 || port > 65535) {
    throw UsageError("--port " + std::to_string(port) + ": not a port number (0 to 65535)");
  }
  Socket server(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (server.fd < 0) throw UsageError(std::string("cannot open a socket: ") + std::strerror(errno));
  const int yes = 1;
  setsockopt(server.fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(server.fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(server.fd, 16) != 0) {
    throw UsageError("127.0.0.1:" + std::to_string(port) + ": cannot listen: " +
                     std::strerror(errno) + " (choose another port with --port)");
  }
  socklen_t length = sizeof address;
  getsockname(server.fd, reinterpret_cast<sockaddr*>(&address), &length);

  g_stop = 0;
  StopSignals signals;
  on_listening(ntohs(address.sin_port));
  while (!g_stop) {
    pollfd p{server.fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 250);
    if (ready <= 0) continue;  // timeout, or EINTR from a signal (the loop checks g_stop)
    Socket client(::accept4(server.fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (client.fd < 0) continue;
    handle(client.fd, page);
    ::shutdown(client.fd, SHUT_WR);
  }
}

}  // namespace mabd::cli
