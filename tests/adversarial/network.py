# Reach the network: TCP to the outside, a UDP socket, a raw netlink socket; report what worked.
import socket as _socket

for _family, _kind in ((_socket.AF_INET, _socket.SOCK_STREAM), (_socket.AF_INET6, _socket.SOCK_DGRAM),
                       (_socket.AF_NETLINK, _socket.SOCK_RAW)):
    try:
        _s = _socket.socket(_family, _kind)
        print("socket allowed", _family)
        _s.close()
    except OSError as _exc:
        print("socket refused", _family, type(_exc).__name__)
try:
    _socket.create_connection(("1.1.1.1", 80), timeout=2).close()
    print("NETWORK REACHED")
except OSError as _exc:
    print("no network", type(_exc).__name__)
