"""What a bot and the referee say: engine actions as protobuf messages, and where a bot finds us."""
