#ifndef CCURL_ADDRESS_POLICY_H
#define CCURL_ADDRESS_POLICY_H

#include <stddef.h>
#include <curl/curl.h>

// The address policy, checked where libcurl opens a connection's socket
// (CURLOPT_OPENSOCKETFUNCTION): for every resolved candidate address of every host, the first
// request's and every redirect hop's alike, after name resolution (so no spelling of a host, no
// DNS answer and no CURLOPT_RESOLVE entry gets around it). A refused candidate gets no socket,
// so no packet is ever sent to it.
//
// Addresses are 16 bytes, IPv6 in network order; an IPv4 address is written IPv4-mapped
// (::ffff:a.b.c.d), so one representation serves both families.

/// A network of the allow-list: `address` with its first `prefix_length` bits significant
/// (0 to 128; an IPv4 /n is written IPv4-mapped with prefix 96 + n).
typedef struct CCurl_network {
    unsigned char address[16];
    unsigned int prefix_length;
} CCurl_network;

/// What may be connected to: globally reachable addresses, plus the allowed networks, or
/// everything when `allow_private_networks` is set.
typedef struct CCurl_address_policy {
    int allow_private_networks;
    const CCurl_network *allowed;
    size_t allowed_count;
} CCurl_address_policy;

/// One easy handle's socket guard: the policy it checks, and what happened to the candidates
/// of the latest request (redirect hop) that opened connections. The caller clears the counts
/// before each transfer; `handle` and `hop` are the guard's own.
typedef struct CCurl_socket_guard {
    /// The policy, owned by the caller; `NULL` refuses every address.
    const CCurl_address_policy *policy;
    /// The easy handle guarded (set by CCurl_easy_install_socket_guard).
    CURL *handle;
    /// The redirect count of the request the counts below are for.
    long hop;
    /// Candidate addresses of that request refused by the policy.
    unsigned int refused;
    /// Sockets opened for that request's permitted candidates.
    unsigned int opened;
    /// `errno` of that request's last `socket()` that failed (EMFILE, ENFILE…), 0 if none did.
    int open_error;
    /// The lowest descriptor number a socket may not have (0: no limit): one this high is
    /// closed at once and counts as a `socket()` that failed with EMFILE, leaving the slots
    /// above it to what cannot fail safely (see the library's `FileDescriptorBudget`).
    int descriptor_ceiling;
} CCurl_socket_guard;

/// 1 when `address` is globally reachable, after unwrapping IPv4-mapped (::ffff:0:0/96),
/// NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses to the IPv4 address inside: not in an
/// IANA special-purpose range whose "Globally Reachable" is false (RFC 6890 and its updates),
/// not multicast, not outside IPv6's global unicast space 2000::/3.
int CCurl_address_is_global(const unsigned char address[16]);

/// 1 when `policy` lets a connection be made to `address`: every address with
/// `allow_private_networks`; else an address inside an allowed network, or globally reachable.
/// An address that embeds an IPv4 address (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96 but
/// :: and ::1, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16) is inside an allowed
/// network only when that network's prefix is at least as long as the embedding one (::/0 and
/// 2000::/3 say nothing of IPv4; 64:ff9b::/96 allows NAT64 addresses explicitly); otherwise it
/// is judged by the IPv4 address inside, allowed when that address is inside an allowed IPv4
/// network or globally reachable (IPv4-compatible and local-use NAT64 addresses never are).
int CCurl_address_policy_permits(const CCurl_address_policy *policy, const unsigned char address[16]);

/// Installs the checking CURLOPT_OPENSOCKETFUNCTION on `handle`, with `guard` as its data.
/// `guard` must outlive the handle's transfers.
CURLcode CCurl_easy_install_socket_guard(CURL *handle, CCurl_socket_guard *guard);

#endif
