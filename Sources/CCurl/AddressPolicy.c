// The address policy and the CURLOPT_OPENSOCKETFUNCTION that enforces it (see
// include/CCurlAddressPolicy.h).

#include "CCurlAddressPolicy.h"

#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/// Whether the first `bits` bits of `a` and `b` are equal.
static int prefix_matches(const unsigned char *a, const unsigned char *b, unsigned int bits) {
    unsigned int whole = bits / 8, rest = bits % 8;
    if (memcmp(a, b, whole) != 0) return 0;
    if (rest == 0) return 1;
    unsigned char mask = (unsigned char)(0xFF << (8 - rest));
    return (a[whole] & mask) == (b[whole] & mask);
}

/// An IPv4 range (`a.b.c.d/bits`) as the 32-bit number and its prefix length.
typedef struct { unsigned int network; unsigned int bits; } ipv4_range;

/// IANA's IPv4 Special-Purpose Address Registry, the entries whose "Globally Reachable" is
/// False (RFC 6890, 7526, 8190, 8880 …), and multicast (224.0.0.0/4). The two exceptions inside
/// 192.0.0.0/24 that are globally reachable (192.0.0.9 and 192.0.0.10) are let through below.
static const ipv4_range ipv4_not_global[] = {
    {0x00000000u, 8},   // 0.0.0.0/8        "this network", 0.0.0.0 unspecified
    {0x0A000000u, 8},   // 10.0.0.0/8       private (RFC 1918)
    {0x64400000u, 10},  // 100.64.0.0/10    shared address space, CGNAT (RFC 6598)
    {0x7F000000u, 8},   // 127.0.0.0/8      loopback
    {0xA9FE0000u, 16},  // 169.254.0.0/16   link-local (cloud metadata lives here)
    {0xAC100000u, 12},  // 172.16.0.0/12    private (RFC 1918)
    {0xC0000000u, 24},  // 192.0.0.0/24     IETF protocol assignments
    {0xC0000200u, 24},  // 192.0.2.0/24     documentation (TEST-NET-1)
    {0xC0586300u, 24},  // 192.88.99.0/24   6to4 relay anycast, deprecated (RFC 7526)
    {0xC0A80000u, 16},  // 192.168.0.0/16   private (RFC 1918)
    {0xC6120000u, 15},  // 198.18.0.0/15    benchmarking
    {0xC6336400u, 24},  // 198.51.100.0/24  documentation (TEST-NET-2)
    {0xCB007100u, 24},  // 203.0.113.0/24   documentation (TEST-NET-3)
    {0xE0000000u, 4},   // 224.0.0.0/4      multicast
    {0xF0000000u, 4},   // 240.0.0.0/4      reserved; 255.255.255.255 limited broadcast
};

static int ipv4_is_global(const unsigned char *bytes) {
    unsigned int value = ((unsigned int)bytes[0] << 24) | ((unsigned int)bytes[1] << 16)
        | ((unsigned int)bytes[2] << 8) | (unsigned int)bytes[3];
    if (value == 0xC0000009u || value == 0xC000000Au) return 1;  // 192.0.0.9 PCP, 192.0.0.10 TURN anycast
    for (size_t i = 0; i < sizeof ipv4_not_global / sizeof ipv4_not_global[0]; i++) {
        unsigned int bits = ipv4_not_global[i].bits;
        unsigned int mask = bits == 0 ? 0 : 0xFFFFFFFFu << (32 - bits);
        if ((value & mask) == ipv4_not_global[i].network) return 0;
    }
    return 1;
}

/// An IPv6 range and its prefix length.
typedef struct { unsigned char prefix[16]; unsigned int bits; } ipv6_range;

/// Inside 2000::/3, IANA's IPv6 Special-Purpose Address Registry entries whose "Globally
/// Reachable" is True although they lie in a range that is not (2001::/23).
static const ipv6_range ipv6_global_exceptions[] = {
    {{0x20, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01}, 128},  // 2001:1::1 PCP anycast
    {{0x20, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02}, 128},  // 2001:1::2 TURN anycast
    {{0x20, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03}, 128},  // 2001:1::3 DNS-SD SRP anycast
    {{0x20, 0x01, 0x00, 0x03}, 32},                                          // 2001:3::/32 AMT
    {{0x20, 0x01, 0x00, 0x04, 0x01, 0x12}, 48},                              // 2001:4:112::/48 AS112-v6
    {{0x20, 0x01, 0x00, 0x20}, 28},                                          // 2001:20::/28 ORCHIDv2
    {{0x20, 0x01, 0x00, 0x30}, 28},                                          // 2001:30::/28 drone remote ID
};

/// Inside 2000::/3, the registry's ranges that are not globally reachable.
static const ipv6_range ipv6_not_global[] = {
    {{0x20, 0x01, 0x00, 0x00}, 23},  // 2001::/23 IETF protocol assignments (Teredo 2001::/32,
                                     // benchmarking 2001:2::/48, ORCHID 2001:10::/28 …)
    {{0x20, 0x01, 0x0D, 0xB8}, 32},  // 2001:db8::/32 documentation
    {{0x3F, 0xFF, 0x00, 0x00}, 20},  // 3fff::/20 documentation (RFC 9637)
};

static const unsigned char ipv4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
static const unsigned char nat64_prefix[12] = {0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0};

int CCurl_address_is_global(const unsigned char address[16]) {
    // IPv4, written IPv4-mapped, and NAT64's well-known prefix (RFC 6052): the IPv4 address inside.
    if (memcmp(address, ipv4_mapped_prefix, 12) == 0) return ipv4_is_global(address + 12);
    if (memcmp(address, nat64_prefix, 12) == 0) return ipv4_is_global(address + 12);
    // IPv6's global unicast space is 2000::/3; everything else (::, ::1, IPv4-compatible,
    // 64:ff9b:1::/48, 100::/64, fc00::/7, fe80::/10, fec0::/10, ff00::/8 …) is not global.
    if ((address[0] & 0xE0) != 0x20) return 0;
    // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 carries the IPv4 address AA.BB.CC.DD.
    if (address[0] == 0x20 && address[1] == 0x02) return ipv4_is_global(address + 2);
    for (size_t i = 0; i < sizeof ipv6_global_exceptions / sizeof ipv6_global_exceptions[0]; i++) {
        if (prefix_matches(address, ipv6_global_exceptions[i].prefix, ipv6_global_exceptions[i].bits)) return 1;
    }
    for (size_t i = 0; i < sizeof ipv6_not_global / sizeof ipv6_not_global[0]; i++) {
        if (prefix_matches(address, ipv6_not_global[i].prefix, ipv6_not_global[i].bits)) return 0;
    }
    return 1;
}

/// Where `address` embeds an IPv4 address: the length of the embedding prefix, and in `ipv4`
/// the IPv4 address inside (NULL where its place is not fixed); 0 when it embeds none.
/// IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96 (but :: and ::1, which are IPv6's own),
/// NAT64's well-known 64:ff9b::/96 (RFC 6052) and local-use 64:ff9b:1::/48 (RFC 8215, whose
/// operator picks where inside it the IPv4 address goes), and 6to4 2002::/16 (RFC 3056).
/// Teredo (2001::/32) is not decoded: the whole of 2001::/23 is refused unless allowed.
static unsigned int embedded_ipv4(const unsigned char address[16], const unsigned char **ipv4) {
    static const unsigned char zeros[12] = {0};
    static const unsigned char nat64_local[6] = {0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01};
    *ipv4 = NULL;
    if (memcmp(address, ipv4_mapped_prefix, 12) == 0 || memcmp(address, nat64_prefix, 12) == 0) {
        *ipv4 = address + 12;
        return 96;
    }
    if (memcmp(address, zeros, 12) == 0) {
        int own = address[12] == 0 && address[13] == 0 && address[14] == 0 && address[15] <= 1;
        if (own) return 0;
        *ipv4 = address + 12;
        return 96;
    }
    if (memcmp(address, nat64_local, 6) == 0) return 48;
    if (address[0] == 0x20 && address[1] == 0x02) {
        *ipv4 = address + 2;
        return 16;
    }
    return 0;
}

int CCurl_address_policy_permits(const CCurl_address_policy *policy, const unsigned char address[16]) {
    if (policy == NULL) return 0;
    if (policy->allow_private_networks) return 1;
    // An address that embeds an IPv4 address lies inside every IPv6 network shorter than its
    // embedding prefix (::/0, 2000::/3 …): such a network says nothing of IPv4, so only a
    // network at least as long as the prefix (an IPv4 network, written IPv4-mapped; 64:ff9b::/96
    // or longer; 2002::/16 or longer) allows it as it is.
    const unsigned char *ipv4 = NULL;
    unsigned int embedding = embedded_ipv4(address, &ipv4);
    for (size_t i = 0; i < policy->allowed_count; i++) {
        unsigned int bits = policy->allowed[i].prefix_length > 128 ? 128 : policy->allowed[i].prefix_length;
        if (bits < embedding) continue;
        if (prefix_matches(address, policy->allowed[i].address, bits)) return 1;
    }
    // Otherwise it is judged by the IPv4 address inside: an allowed IPv4 network holding it…
    if (ipv4 != NULL) {
        unsigned char mapped[16];
        memcpy(mapped, ipv4_mapped_prefix, 12);
        memcpy(mapped + 12, ipv4, 4);
        for (size_t i = 0; i < policy->allowed_count; i++) {
            unsigned int bits = policy->allowed[i].prefix_length > 128 ? 128 : policy->allowed[i].prefix_length;
            if (bits >= 96 && prefix_matches(mapped, policy->allowed[i].address, bits)) return 1;
        }
    }
    // … or by whether it is globally reachable (IPv4-mapped, NAT64 and 6to4 by the IPv4 address
    // inside; IPv4-compatible and local-use NAT64 addresses never are).
    return CCurl_address_is_global(address);
}

/// The candidate's address in the policy's 16-byte form; 0 for a family that is neither IPv4
/// nor IPv6 (refused).
static int sixteen_bytes(const struct curl_sockaddr *candidate, unsigned char out[16]) {
    if (candidate->family == AF_INET && candidate->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)(const void *)&candidate->addr;
        memcpy(out, ipv4_mapped_prefix, 12);
        memcpy(out + 12, &v4->sin_addr, 4);
        return 1;
    }
    if (candidate->family == AF_INET6 && candidate->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)(const void *)&candidate->addr;
        memcpy(out, &v6->sin6_addr, 16);
        return 1;
    }
    return 0;
}

/// libcurl asks this for a socket for each candidate address it tries; CURL_SOCKET_BAD makes
/// it go on to the next candidate, and fail the transfer (CURLE_COULDNT_CONNECT) when none is
/// left.
static curl_socket_t open_guarded_socket(void *data, curlsocktype purpose, struct curl_sockaddr *candidate) {
    (void)purpose;
    CCurl_socket_guard *guard = data;
    if (guard != NULL && guard->handle != NULL) {
        // A redirect's request starts its counts afresh: they tell whether the request that
        // failed had any permitted candidate.
        long hop = 0;
        if (curl_easy_getinfo(guard->handle, CURLINFO_REDIRECT_COUNT, &hop) == CURLE_OK && hop != guard->hop) {
            guard->hop = hop;
            guard->refused = 0;
            guard->opened = 0;
            guard->open_error = 0;
        }
    }
    unsigned char address[16];
    if (guard == NULL || !sixteen_bytes(candidate, address)
        || !CCurl_address_policy_permits(guard->policy, address)) {
        if (guard != NULL) guard->refused += 1;
        return CURL_SOCKET_BAD;
    }
#ifdef SOCK_CLOEXEC
    int type = candidate->socktype | SOCK_CLOEXEC;
#else
    int type = candidate->socktype;
#endif
    curl_socket_t opened = socket(candidate->family, type, candidate->protocol);
    if (opened != CURL_SOCKET_BAD && guard->descriptor_ceiling > 0 && opened >= guard->descriptor_ceiling) {
        close(opened);
        opened = CURL_SOCKET_BAD;
        errno = EMFILE;
    }
    if (opened == CURL_SOCKET_BAD) {
        guard->open_error = errno;
    } else {
        guard->opened += 1;
    }
    return opened;
}

CURLcode CCurl_easy_install_socket_guard(CURL *handle, CCurl_socket_guard *guard) {
    if (guard != NULL) guard->handle = handle;
    CURLcode result = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, open_guarded_socket);
    if (result != CURLE_OK) return result;
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, (void *)guard);
}
