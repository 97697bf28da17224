"""Which server a target's host names, whatever it calls it: the one place a host is resolved for the dashboard's
rules. Pure apart from the resolver and a socket bound to test an address (no Django).

Two spellings of one server must be one key (runs.models.Target.database_key): the one-run-per-database rule
compares keys, and two runs on one database drop each other's tables. `127.0.0.1`, `localhost`, `127.1`,
`2130706433`, `0x7f000001`, `::1` and `127.0.0.2` all reach a server of this host listening on every address, and so
does this host's own interface address: every one of them is this host. An unspecified address (`0`, `0.0.0.0`,
`::`) is no server's address at all: a client given it reaches this host, so a target may not name one."""

import ipaddress
import socket

THIS_HOST = "127.0.0.1"  # the key's word for every address of this host (loopback or one of its interfaces)


def addresses(host, port):
    """The addresses `host` resolves to (an IPv4-mapped IPv6 address as IPv4); empty when it does not resolve."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return set()
    found = set()
    for *_rest, sockaddr in infos:
        address = ipaddress.ip_address(sockaddr[0].split("%")[0])
        found.add(getattr(address, "ipv4_mapped", None) or address)
    return found


def resolved_host(host, port):
    """The host's first address in a fixed order (IPv4 first, then IPv6), or the name in lower case when it does
    not resolve (the run will fail to connect anyway)."""
    found = addresses(host, port)
    if not found:
        return host.lower()
    return str(min(found, key=lambda a: (a.version, int(a))))


def names_unspecified(host, port=0):
    """Whether `host` is, or resolves to, an unspecified address (0.0.0.0 or ::, in any spelling: '0', '0x0')."""
    return any(address.is_unspecified for address in addresses(host, port))


def server_address(host, port):
    """The address that stands for the server in a key: THIS_HOST for any address of this host (every loopback
    address, this host's interfaces' addresses), else the resolved address (or the name, when it does not resolve)."""
    address = resolved_host(host, port)
    return THIS_HOST if on_this_host(address) else address


def on_this_host(address):
    """Whether `address` (an IP address, as resolved_host gives it) is one of this host's own: a loopback address,
    or one a socket here can be bound to (an address of one of its interfaces). A server there shares this host's
    CPUs with the tool. None when it cannot be told: a name that did not resolve, or a kernel that lets any address
    be bound (net.ipv4/ipv6.ip_nonlocal_bind). A server in another network namespace, container or virtual machine
    of the same machine has an address of its own: it reads as another host."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    if ip.is_loopback:
        return True
    if ip.is_unspecified:
        return True  # a client given 0.0.0.0 or :: reaches this host
    try:
        with open(f"/proc/sys/net/ipv{ip.version}/ip_nonlocal_bind") as fh:
            if fh.read().strip() != "0":
                return None
    except OSError:
        pass
    with socket.socket(socket.AF_INET6 if ip.version == 6 else socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((str(ip), 0))
        except OSError:
            return False
    return True
