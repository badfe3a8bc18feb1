"""How bots reach the hub: the gRPC service and server, the local socket transport, TLS."""
