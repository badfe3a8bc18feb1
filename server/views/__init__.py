"""What a person reads about a match: transcripts, replays, the request of a step."""
