// A minimal blocking HTTP/1.1 server for `mabd view --serve`: one page, loopback only.
#pragma once

#include <functional>
#include <string>

namespace mabd::cli {

/// Serves `page` as text/html at http://127.0.0.1:PORT/ (also /index.html; other paths get
/// 404, other methods than GET and HEAD get 405), one connection at a time, until SIGINT or
/// SIGTERM. `port` 0 picks a free port. `on_listening(port)` is called once the socket
/// listens, with the actual port. Returns normally after a signal; throws UsageError when
/// the port is out of range or cannot be bound (one line naming the address).
void serve_page(const std::string& page, int port, const std::function<void(int)>& on_listening);

}  // namespace mabd::cli
