"""Pure rules engines for cardshark's games: no I/O, no gRPC, no database."""
