"""The referee: gRPC services, the match loop, bot processes, the CLI and the web page."""
