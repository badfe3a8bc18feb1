"""Generated protobuf stubs; do not edit."""
