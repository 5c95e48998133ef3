#include "core/platform/bind_address.h"

#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/vocabulary/types.h"

namespace shardlens {

namespace {

std::string numeric(const sockaddr* sa) {
  char host[NI_MAXHOST] = {};
  const socklen_t len = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (getnameinfo(sa, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return "";
  std::string s = host;
  if (const size_t pct = s.find('%'); pct != std::string::npos) s.resize(pct);  // fe80::1%eth0
  return s;
}

template <class Visit>
void for_each_address(Visit visit) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6))
      continue;
    if (visit(std::string(a->ifa_name), a->ifa_addr->sa_family, numeric(a->ifa_addr))) break;
  }
  freeifaddrs(list);
}

// The source address the kernel would use to reach `host` (a UDP connect sends nothing).
std::string source_address_towards(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* list = nullptr;
  const int rc = getaddrinfo(host.c_str(), "9", &hints, &list);
  if (rc != 0 || !list)
    throw InputError("MASTER_ADDR '" + host + "' does not resolve: " + gai_strerror(rc));
  std::string found, why = "no address";
  for (addrinfo* a = list; a && found.empty(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      found = numeric(reinterpret_cast<sockaddr*>(&local));
    } else {
      why = std::strerror(errno);
    }
    ::close(fd);
  }
  freeaddrinfo(list);
  if (found.empty())
    throw InputError("no route from this host to MASTER_ADDR '" + host + "': " + why);
  return found;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string interface_address(const std::string& name) {
  std::string v4, v6;
  for_each_address([&](const std::string& iface, int family, const std::string& addr) {
    if (iface != name || addr.empty()) return false;
    if (family == AF_INET && v4.empty()) v4 = addr;
    if (family == AF_INET6 && v6.empty() && addr.rfind("fe80:", 0) != 0) v6 = addr;
    return false;
  });
  return v4.empty() ? v6 : v4;
}

std::string interface_of_address(const std::string& address) {
  std::string found;
  for_each_address([&](const std::string& iface, int, const std::string& addr) {
    if (addr != address) return false;
    found = iface;
    return true;
  });
  return found;
}

BindChoice choose_bind_address(const std::string& master_addr, const std::string& iface) {
  BindChoice c;
  if (!iface.empty()) {
    c.interface = iface;
    c.address = interface_address(iface);
    if (c.address.empty()) {
      throw InputError("network interface '" + iface +
                       "' (--iface or GLOO_SOCKET_IFNAME) does not exist or has no address");
    }
    c.reason = "interface " + iface + " as named";
    return c;
  }
  if (is_loopback_host(master_addr)) {
    c.address = "127.0.0.1";
    c.interface = interface_of_address(c.address);
    c.reason = "loopback: MASTER_ADDR is this host's loopback";
    return c;
  }
  c.address = source_address_towards(master_addr);
  c.interface = interface_of_address(c.address);
  c.reason = "the address that routes to MASTER_ADDR " + master_addr;
  return c;
}

}  // namespace shardlens
