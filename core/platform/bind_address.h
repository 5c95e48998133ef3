#pragma once
// Which local address a rank's Gloo pairs (and NCCL's bootstrap) bind, as torch.distributed
// chooses it: the interface the user names (--iface, else GLOO_SOCKET_IFNAME), else the one
// whose address routes to MASTER_ADDR, so that peers on other hosts are told an address
// they can reach. A local run (MASTER_ADDR on loopback) stays on loopback. No LibTorch.
#include <string>

namespace shardlens {

struct BindChoice {
  std::string address;    // numeric address to bind, e.g. "10.77.0.2"
  std::string interface;  // its interface, e.g. "veth1" (empty when unknown)
  std::string reason;     // how it was chosen, for the run's messages
};

bool is_loopback_host(const std::string& host);

// Throws InputError when the named interface does not exist or has no address, or when
// MASTER_ADDR does not resolve or no route leads to it.
BindChoice choose_bind_address(const std::string& master_addr, const std::string& iface);

// The first IPv4 (else IPv6) address of interface `name`; empty when it has none.
std::string interface_address(const std::string& name);
// The interface holding `address`; empty when none does.
std::string interface_of_address(const std::string& address);

}  // namespace shardlens
